import fs from "node:fs";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Storage, type StorageOptions } from "@google-cloud/storage";
import { BucketNotFoundError, objectPathSegments, type Bucket, downloadObject } from "./bucket.js";
import { meter } from "./local-bucket.js";

/**
 * Google Cloud Storage through the official client. Credentials are found the standard way
 * (GOOGLE_APPLICATION_CREDENTIALS, the metadata server, gcloud's application-default login);
 * STORAGE_EMULATOR_HOST points the client at an emulator, without authentication.
 *
 * Writes are single-request uploads: GCS commits an object only when the whole request body has arrived,
 * so an upload cut short (client gone, size limit hit) leaves no object behind.
 */
export class GcsBucket implements Bucket {
  readonly kind = "gcs" as const;
  private readonly storage: Storage;

  constructor(
    readonly name: string,
    options: StorageOptions = {},
  ) {
    this.storage = new Storage(options);
  }

  private file(objectPath: string) {
    objectPathSegments(objectPath);
    return this.storage.bucket(this.name).file(objectPath);
  }

  async write(objectPath: string, body: Readable, opts: { maxBytes?: number; contentType?: string } = {}) {
    const m = meter(opts.maxBytes);
    // resumable: false = one multipart request; md5 validation compares what GCS stored with what we sent.
    const out = this.file(objectPath).createWriteStream({
      resumable: false,
      validation: "md5",
      contentType: opts.contentType ?? "application/octet-stream",
    });
    await pipeline(body, m.stream, out);
    return m.result();
  }

  async uploadFile(localFile: string, objectPath: string) {
    return this.write(objectPath, fs.createReadStream(localFile));
  }

  async read(objectPath: string): Promise<Readable> {
    if (!(await this.stat(objectPath))) throw new BucketNotFoundError(objectPath);
    return this.file(objectPath).createReadStream({ validation: false });
  }

  downloadTo(objectPath: string, localFile: string) {
    return downloadObject(this, objectPath, localFile);
  }

  async stat(objectPath: string) {
    try {
      const [meta] = await this.file(objectPath).getMetadata();
      return { size: Number(meta.size ?? 0) };
    } catch (err) {
      if ((err as { code?: number }).code === 404) return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const base = prefix.replace(/\/+$/, "");
    const [files] = await this.storage.bucket(this.name).getFiles({ prefix: base ? `${base}/` : undefined, autoPaginate: true });
    return files.map((f) => f.name).sort();
  }

  async delete(objectPath: string) {
    await this.file(objectPath).delete({ ignoreNotFound: true });
  }
}
