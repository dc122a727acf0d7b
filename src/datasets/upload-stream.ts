import { Transform, type Readable } from "node:stream";
import { ApiError, msg } from "../errors.js";

// The bytes of an upload on their way to the bucket: the zip signature is checked on the first bytes, and a
// client that goes away mid-body fails the write, so the bucket keeps nothing (its temp file is removed).

/** A zip starts with a local file header (PK\x03\x04), or is empty (PK\x05\x06, the end-of-directory record). */
const ZIP_MAGICS = [Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from([0x50, 0x4b, 0x05, 0x06])];

export class NotAZipError extends Error {
  constructor() {
    super("the file is not a zip archive (it does not start with the zip signature PK\\x03\\x04)");
  }
}

export class UploadInterruptedError extends Error {
  constructor() {
    super("the upload was interrupted before the whole body arrived");
  }
}

export const notAZip = () => new ApiError(415, "not_a_zip", msg("dataset.not_a_zip"), undefined, { connection: "close" });

export const uploadInterrupted = () => new ApiError(400, "upload_interrupted", msg("dataset.upload_interrupted"));

/** Passes bytes through once the first four are a zip signature; fails the stream at once otherwise. */
export function zipSignatureCheck(): Transform {
  let head = Buffer.alloc(0);
  let checked = false;
  return new Transform({
    highWaterMark: 1024 * 1024,
    transform(chunk: Buffer, _enc, cb) {
      if (checked) return cb(null, chunk);
      head = Buffer.concat([head, chunk]);
      if (head.length < 4) return cb();
      if (!ZIP_MAGICS.some((m) => head.subarray(0, 4).equals(m))) return cb(new NotAZipError());
      checked = true;
      cb(null, head);
    },
    flush(cb) {
      cb(checked ? null : new NotAZipError());
    },
  });
}

/**
 * Feeds `body` into `into` without letting a failure of one destroy the other: the route can still answer when
 * the write fails, and a body that errors or closes early (the client went away) fails `into`. A body already
 * gone when the upload starts (it was cut while the request was being authenticated) fails at once.
 * Returns a detach function for when the write is over.
 */
export function feedUpload(body: Readable, into: Transform): () => void {
  const fail = (err?: Error) => {
    if (!into.writableEnded && !into.destroyed) into.destroy(err ?? new UploadInterruptedError());
  };
  const onError = (err: Error) => fail(isClientAbort(err) ? new UploadInterruptedError() : err);
  const onClose = () => fail();
  // The writer's pipeline reads the error from the stream's state; until it is attached (the bucket may still be
  // creating folders) nothing else listens, and an 'error' with no listener would end the process.
  into.on("error", () => undefined);
  if (body.destroyed || body.readableAborted) {
    queueMicrotask(() => fail());
    return () => undefined;
  }
  body.on("error", onError);
  body.on("close", onClose);
  body.pipe(into);
  return () => {
    body.off("error", onError);
    body.off("close", onClose);
    body.unpipe(into);
  };
}

export function isClientAbort(err: unknown): boolean {
  // Told by the code, not the message: Node's own "aborted" error on a request cut mid-body carries ECONNRESET.
  const e = err as { code?: string } | undefined;
  return e?.code === "ECONNRESET" || e?.code === "ERR_STREAM_PREMATURE_CLOSE";
}
