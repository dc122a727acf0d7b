import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { msg, say, type Message } from "../errors.js";

/**
 * Object storage, addressed by slash-separated object paths such as `<user_id>/<experiment_dir>/data.zip`.
 * Local folder by default; Google Cloud Storage when GCS_BUCKET is set; S3 (or an S3-compatible store) when
 * S3_BUCKET is set. Writes are all-or-nothing: a reader never sees a half-written object.
 */
export interface Bucket {
  readonly kind: "local" | "gcs" | "s3";
  /** Bucket name, as in gs://<name>/<path> (s3://<name>/<path> for S3): objectUri(). */
  readonly name: string;
  /** Streams `body` to `path`; returns its size and sha256. Fails with BucketLimitError past maxBytes. */
  write(path: string, body: Readable, opts?: { maxBytes?: number; contentType?: string }): Promise<{ size: number; sha256: string }>;
  /** Copies a local file to `path`. */
  uploadFile(localFile: string, path: string): Promise<{ size: number; sha256: string }>;
  /** Streams the object; rejects with BucketNotFoundError when absent. */
  read(path: string): Promise<Readable>;
  /** Copies the object to a local file (streamed). */
  downloadTo(path: string, localFile: string): Promise<{ size: number }>;
  /** Size of the object, or null when absent. */
  stat(path: string): Promise<{ size: number } | null>;
  /** Object paths under a prefix (recursive). */
  list(prefix: string): Promise<string[]>;
  /** Removes one object; absent is fine. */
  delete(path: string): Promise<void>;
  /**
   * Removes the folder `prefix` and the folders above it that are left empty (a local folder only: GCS has no
   * folders), so that an erased user's or experiment's id does not stay behind as an empty folder's name.
   */
  removeEmptyFolders?(prefix: string): Promise<void>;
  /** deleteUnder() in fewer requests, where the store can remove many objects in one (S3's DeleteObjects). */
  deleteUnder?(prefix: string): Promise<number>;
  /** Lets go of connections (S3's client); the bucket is not used after. */
  close?(): void;
}

/** Removes every object under the folder `prefix` (idempotent: nothing there is fine); returns how many went. */
export async function deleteUnder(bucket: Bucket, prefix: string): Promise<number> {
  let deleted = 0;
  if (bucket.deleteUnder) deleted = await bucket.deleteUnder(prefix);
  else {
    const objects = await bucket.list(prefix);
    for (const object of objects) await bucket.delete(object);
    deleted = objects.length;
  }
  await bucket.removeEmptyFolders?.(prefix);
  return deleted;
}

/** The scheme of links to this deployment's objects: s3:// for S3, gs:// otherwise (the seed's, local folder too). */
export function uriScheme(bucket: Pick<Bucket, "kind">): "s3" | "gs" {
  return bucket.kind === "s3" ? "s3" : "gs";
}

/**
 * A bucket link's `gs://<bucket>/` or `s3://<bucket>/` in front of an object path. Where a bucket path is asked for
 * (zip_gcloud, an upload's path) either is accepted and ignored: the path is always in this deployment's bucket.
 */
export const BUCKET_URI_PREFIX = /^(?:gs|s3):\/\/[^/]+\//;

/** The object path of a bucket path given with or without its gs://<bucket>/ (or s3://<bucket>/) in front. */
export function withoutBucketUri(pathOrUri: string): string {
  return pathOrUri.replace(BUCKET_URI_PREFIX, "");
}

/** The link to an object, as /predict takes it: gs://<bucket>/<path> or s3://<bucket>/<path>. */
export function objectUri(bucket: Pick<Bucket, "kind" | "name">, objectPath: string): string {
  return `${uriScheme(bucket)}://${bucket.name}/${objectPath}`;
}

export class BucketNotFoundError extends Error {
  constructor(public readonly path: string) {
    super(`no object at ${path}`);
  }
}

export class BucketLimitError extends Error {
  constructor(public readonly maxBytes: number) {
    super(`the object is larger than the limit of ${maxBytes} bytes`);
  }
}

/** An object path refused by objectPathSegments, in catalog words. */
export class ObjectPathError extends Error {
  constructor(public readonly text: Message) {
    super(say(text, "en"));
  }
}

/**
 * Checks an object path: relative, no `..`, no empty segments, no backslashes or control characters.
 * Returns the segments. Throws an ObjectPathError, whose words fit a 400, otherwise.
 */
export function objectPathSegments(path: string): string[] {
  if (typeof path !== "string" || path.length === 0) throw new ObjectPathError(msg("path.empty"));
  if (path.length > 1024) throw new ObjectPathError(msg("path.too_long"));
  if (path.startsWith("/")) throw new ObjectPathError(msg("path.absolute"));
  if (/[\\\u0000-\u001f\u007f]/.test(path)) throw new ObjectPathError(msg("path.control"));
  const segments = path.split("/");
  for (const s of segments) {
    if (s === "") throw new ObjectPathError(msg("path.empty_segment"));
    if (s === "." || s === "..") throw new ObjectPathError(msg("path.dot_segment", { segment: s }));
    if (Buffer.byteLength(s) > 255) throw new ObjectPathError(msg("path.long_name"));
  }
  return segments;
}

/** Streams an object to a local file; shared by the adapters, since it needs nothing but read(). */
export async function downloadObject(bucket: Pick<Bucket, "read">, objectPath: string, localFile: string): Promise<{ size: number }> {
  await fs.promises.mkdir(path.dirname(localFile), { recursive: true });
  await pipeline(await bucket.read(objectPath), fs.createWriteStream(localFile));
  return { size: (await fs.promises.stat(localFile)).size };
}
