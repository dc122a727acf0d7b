import { ApiError } from "../errors.js";
import { objectPathSegments, withoutBucketUri } from "../storage/bucket.js";

// zip_gcloud: the bucket object path `<user_dir>/<experiment_dir>/<file>.zip`, where user_dir is the
// caller's user id. `gs://<bucket>/` (or `s3://<bucket>/`) in front is accepted and ignored. Another user's folder is 404
// (never 403): whether it exists is none of the caller's business.

const SEGMENT = /^[A-Za-z0-9._-]+$/;
/**
 * Folder and file names: most file systems stop at 255 bytes per name, and the bucket writes a temp name a few
 * characters longer beside the file; past that the write failed with ENAMETOOLONG (a 500).
 */
export const MAX_SEGMENT_LENGTH = 200;

/** Checks a zip_gcloud for the caller; returns the bare object path or throws the ApiError to answer. */
export function resolveZipPath(zipGcloud: string, userId: string, field = "zip_gcloud"): string {
  return resolveObjectPath(zipGcloud, userId, field, /\.zip$/i, "must name a .zip file");
}

/** Where an upload may go: a zip, or a bare table for a data task (.csv, .xlsx) that the server zips. */
export function resolveUploadPath(objectPath: string, userId: string, field = "path"): string {
  return resolveObjectPath(objectPath, userId, field, /\.(zip|csv|xlsx)$/i, "must name a .zip file (or a data task's .csv or .xlsx table)");
}

function resolveObjectPath(zipGcloud: string, userId: string, field: string, extension: RegExp, extensionMessage: string): string {
  const objectPath = withoutBucketUri(zipGcloud);
  const bad = (message: string) => new ApiError(400, "invalid_request", `${field}: ${message}`, [{ field, message }]);
  let segments: string[];
  try {
    segments = objectPathSegments(objectPath);
  } catch (err) {
    throw bad((err as Error).message);
  }
  if (segments.length !== 3) throw bad("must be <user_dir>/<experiment_dir>/<file>.zip");
  const odd = segments.find((s) => !SEGMENT.test(s));
  if (odd !== undefined) throw bad(`'${odd}' may hold only letters, digits, '.', '-' and '_'`);
  const long = segments.find((s) => s.length > MAX_SEGMENT_LENGTH);
  if (long !== undefined)
    throw bad(`each folder and file name may be at most ${MAX_SEGMENT_LENGTH} characters ('${long.slice(0, 20)}...' has ${long.length})`);
  if (!extension.test(segments[2])) throw bad(extensionMessage);
  if (segments[0] !== userId) throw new ApiError(404, "not_found", `no file at ${objectPath}`);
  return objectPath;
}

/** A folder of the caller's uploads, `<user_dir>/<experiment_dir>`: returns its object prefix (ending in /) or throws. */
export function resolveFolderPath(userDir: string, experimentDir: string, userId: string): string {
  const bad = (message: string) =>
    new ApiError(400, "invalid_request", `experiment_dir: ${message}`, [{ field: "experiment_dir", message }]);
  if (!SEGMENT.test(experimentDir) || experimentDir === "." || experimentDir === "..")
    throw bad("may hold only letters, digits, '.', '-' and '_'");
  if (experimentDir.length > MAX_SEGMENT_LENGTH) throw bad(`must be at most ${MAX_SEGMENT_LENGTH} characters`);
  if (userDir !== userId) throw new ApiError(404, "not_found", `no folder ${userDir}/${experimentDir}`);
  return `${userDir}/${experimentDir}/`;
}
