import fs from "node:fs";
import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { BucketNotFoundError, objectPathSegments, type Bucket, downloadObject } from "./bucket.js";
import { meter } from "./local-bucket.js";

/**
 * Part size of multipart uploads. A 5 GB zip (MAX_UPLOAD_BYTES) is 299 parts of 16 MiB, far below S3's 10,000;
 * an upload holds at most PART_SIZE × QUEUE_SIZE (64 MiB) in memory while its parts are on their way.
 */
export const PART_SIZE = 16 * 1024 * 1024;
/** Parts sent at once per upload. */
export const QUEUE_SIZE = 4;
/** S3's most keys per DeleteObjects request, and per ListObjectsV2 page. */
const BATCH = 1000;

/**
 * Amazon S3 or an S3-compatible store (MinIO, Ceph RGW, NetApp StorageGRID) through the AWS SDK v3; the client
 * (endpoint, region, addressing, credentials) is made by s3-client.ts. Object paths are the keys themselves.
 *
 * Writes are streamed: a body smaller than one part is one PutObject, a larger one a multipart upload of PART_SIZE
 * parts. Neither makes an object visible before its last byte has arrived (a multipart upload becomes an object
 * only at CompleteMultipartUpload), and a write that fails (client gone, size limit, store error) aborts its
 * multipart upload, so its parts do not linger.
 */
export class S3Bucket implements Bucket {
  readonly kind = "s3" as const;

  constructor(
    private readonly client: S3Client,
    readonly name: string,
    private readonly upload: { partSize: number; queueSize: number } = { partSize: PART_SIZE, queueSize: QUEUE_SIZE },
  ) {}

  private key(objectPath: string): string {
    return objectPathSegments(objectPath).join("/");
  }

  async write(objectPath: string, body: Readable, opts: { maxBytes?: number; contentType?: string } = {}) {
    const key = this.key(objectPath);
    const m = meter(opts.maxBytes);
    // Not pipeline(): the Upload reads the meter's output itself. A body that fails passes its error on, so that
    // the Upload stops and aborts.
    body.once("error", (err) => m.stream.destroy(err));
    body.pipe(m.stream);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.name, Key: key, Body: m.stream, ContentType: opts.contentType ?? "application/octet-stream" },
      partSize: this.upload.partSize,
      queueSize: this.upload.queueSize,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      // done() settles after the abort of the multipart upload; the meter's error (BucketLimitError) or the
      // body's is the cause to report, not the SDK's view of its input ending early.
      body.unpipe(m.stream);
      if (!body.destroyed) body.destroy();
      throw m.stream.errored ?? err;
    }
    return m.result();
  }

  async uploadFile(localFile: string, objectPath: string) {
    return this.write(objectPath, fs.createReadStream(localFile));
  }

  async read(objectPath: string): Promise<Readable> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: this.key(objectPath) }));
      return res.Body as Readable;
    } catch (err) {
      if (isNotFound(err)) throw new BucketNotFoundError(objectPath);
      throw err;
    }
  }

  downloadTo(objectPath: string, localFile: string) {
    return downloadObject(this, objectPath, localFile);
  }

  async stat(objectPath: string) {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.name, Key: this.key(objectPath) }));
      return { size: Number(head.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    for await (const keys of this.pages(prefix)) out.push(...keys);
    return out.sort();
  }

  async delete(objectPath: string) {
    // S3 answers 204 for an absent key too.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.name, Key: this.key(objectPath) }));
  }

  /**
   * Every object under the folder `prefix`, page by page (ListObjectsV2, 1000 keys a page), each page removed by
   * one DeleteObjects: a user with 100,000 objects is 100 pairs of requests, not 100,000 deletions, and memory
   * holds one page. A key the store could not delete fails the call (the erasure is retried whole).
   */
  async deleteUnder(prefix: string): Promise<number> {
    let deleted = 0;
    for await (const keys of this.pages(prefix)) {
      if (keys.length === 0) continue;
      const res = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.name, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
      );
      if (res.Errors?.length) {
        const first = res.Errors[0];
        throw new Error(`S3 did not delete ${res.Errors.length} object(s), e.g. ${first.Key}: ${first.Code} ${first.Message ?? ""}`.trim());
      }
      deleted += keys.length;
    }
    return deleted;
  }

  close() {
    this.client.destroy();
  }

  /** The keys under the folder `prefix` ("" = the whole bucket), one ListObjectsV2 page at a time. */
  private async *pages(prefix: string): AsyncGenerator<string[]> {
    const base = prefix.replace(/\/+$/, "");
    if (base) objectPathSegments(base);
    const pages = paginateListObjectsV2(
      { client: this.client, pageSize: BATCH },
      { Bucket: this.name, Prefix: base ? `${base}/` : undefined, MaxKeys: BATCH },
    );
    for await (const page of pages) yield (page.Contents ?? []).map((o) => o.Key!).filter(Boolean);
  }
}

/** A missing key (GetObject: NoSuchKey; HeadObject has no body, so only its 404). A missing bucket is not one. */
export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  if (e?.name === "NoSuchBucket") return false;
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}
