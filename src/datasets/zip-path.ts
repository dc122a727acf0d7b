import { ApiError, msg, detail, type Message } from "../errors.js";
import { ObjectPathError, objectPathSegments, withoutBucketUri } from "../storage/bucket.js";

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
  return resolveObjectPath(zipGcloud, userId, field, /\.zip$/i, msg("dataset.path_must_be_zip"));
}

/** Where an upload may go: a zip, or a bare table for a data task (.csv, .xlsx) that the server zips. */
export function resolveUploadPath(objectPath: string, userId: string, field = "path"): string {
  return resolveObjectPath(objectPath, userId, field, /\.(zip|csv|xlsx)$/i, msg("dataset.path_must_be_upload"));
}

function resolveObjectPath(zipGcloud: string, userId: string, field: string, extension: RegExp, extensionMessage: Message): string {
  const objectPath = withoutBucketUri(zipGcloud);
  const bad = (problem: Message) =>
    new ApiError(400, "invalid_request", msg("request.field_problem", { field, problem }), [detail(field, problem)]);
  let segments: string[];
  try {
    segments = objectPathSegments(objectPath);
  } catch (err) {
    throw bad(err instanceof ObjectPathError ? err.text : msg("path.empty"));
  }
  if (segments.length !== 3) throw bad(msg("dataset.path_segments"));
  const odd = segments.find((s) => !SEGMENT.test(s));
  if (odd !== undefined) throw bad(msg("dataset.path_bad_segment", { segment: odd }));
  const long = segments.find((s) => s.length > MAX_SEGMENT_LENGTH);
  if (long !== undefined)
    throw bad(msg("dataset.path_segment_too_long", { max: MAX_SEGMENT_LENGTH, start: long.slice(0, 20), length: long.length }));
  if (!extension.test(segments[2])) throw bad(extensionMessage);
  if (segments[0] !== userId) throw new ApiError(404, "not_found", msg("dataset.no_file", { path: objectPath }));
  return objectPath;
}

/** A folder of the caller's uploads, `<user_dir>/<experiment_dir>`: returns its object prefix (ending in /) or throws. */
export function resolveFolderPath(userDir: string, experimentDir: string, userId: string): string {
  const bad = (problem: Message) =>
    new ApiError(400, "invalid_request", msg("request.field_problem", { field: "experiment_dir", problem }), [
      detail("experiment_dir", problem),
    ]);
  if (!SEGMENT.test(experimentDir) || experimentDir === "." || experimentDir === "..") throw bad(msg("dataset.dir_characters"));
  if (experimentDir.length > MAX_SEGMENT_LENGTH) throw bad(msg("dataset.dir_too_long", { max: MAX_SEGMENT_LENGTH }));
  if (userDir !== userId) throw new ApiError(404, "not_found", msg("dataset.no_folder", { path: `${userDir}/${experimentDir}` }));
  return `${userDir}/${experimentDir}/`;
}
