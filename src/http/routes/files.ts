import busboy from "busboy";
import type { Request } from "express";
import { z } from "zod";
import type { UploadResult } from "../../datasets/service.js";
import { uploadInterrupted, UploadInterruptedError } from "../../datasets/upload-stream.js";
import { resolveFolderPath, resolveUploadPath, resolveZipPath } from "../../datasets/zip-path.js";
import type { Services } from "../../services.js";
import { ApiError, msg, detail, invalid } from "../../errors.js";
import { actorOf } from "../../audit/audit-log.js";
import { withoutBucketUri } from "../../storage/bucket.js";
import { defineRoute } from "../route.js";
import { fileDeletionSchema } from "../response-schemas.js";
import type { AuthInfo } from "../../auth/types.js";

// Uploads of dataset zips to the bucket, streamed: the server never holds the file in memory.
// PUT sends the raw bytes; POST sends multipart/form-data (field `path`, then field `file`).

const uploadResult = z.object({
  zip_gcloud: z.string().describe("the stored zip: for a bare .csv/.xlsx, the zip the server made of it (same folder and name, .zip)"),
  size: z.number(),
  sha256: z.string(),
  converted_from: z.string().optional().describe("a bare .csv/.xlsx upload: the file name it was sent as"),
  note: z.string().optional().describe("a bare .csv/.xlsx upload: what was stored, in plain words (an .xlsx gives its first sheet)"),
});
const fileParams = z.object({ user_dir: z.string(), experiment_dir: z.string(), file: z.string() });
const folderParams = z.object({ user_dir: z.string(), experiment_dir: z.string() });
const deleteQuery = z.object({
  force: z
    .enum(["true", "false"], { error: invalid("validation.true_or_false") })
    .transform((v) => v === "true")
    .optional()
    .describe("true: cancel the queued or running experiments that read it, then delete"),
});

function contentLength(req: Request): number | undefined {
  const v = req.get("content-length");
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** `path` in a multipart upload: the full zip_gcloud, or `<experiment_dir>/<file>.zip` inside the caller's folder. */
function multipartPath(value: string, storagePrefix: string): string {
  const full = withoutBucketUri(value).split("/").length === 2 ? `${storagePrefix}/${value}` : value;
  return resolveUploadPath(full, storagePrefix, "path");
}

function multipartUpload(req: Request, services: Services, scope: AuthInfo): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err: unknown, value?: UploadResult) => {
      if (settled) return;
      settled = true;
      if (err) {
        req.unpipe();
        req.resume(); // drain; the error answer closes the connection
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes the caught error on unchanged (truthiness narrows `unknown` to `{}`)
        reject(err);
      } else resolve(value!);
    };
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 1, fields: 10, fieldSize: 4096, parts: 20 } });
    } catch (err) {
      return settle(new ApiError(415, "unsupported_media_type", msg("files.multipart_needed", { why: (err as Error).message })));
    }
    let objectPath: string | undefined;
    let started = false;
    let fileStream: (NodeJS.ReadableStream & { destroy(err?: Error): void }) | undefined;
    // A client that goes away mid-form: busboy never sees the end, so the file part is failed here (the write
    // then removes its temp file) and the request settles instead of waiting for ever.
    req.on("close", () => {
      if (req.complete) return;
      fileStream?.destroy(new UploadInterruptedError());
      if (!started) settle(uploadInterrupted());
    });
    bb.on("field", (name, value) => {
      if (name === "path") objectPath = value;
    });
    bb.on("file", (name, file) => {
      if (name !== "file" || started) return void file.resume();
      started = true;
      fileStream = file;
      if (objectPath === undefined) {
        file.resume();
        return settle(new ApiError(400, "invalid_request", msg("files.path_first"), [detail("path", msg("files.required_before_file"))]));
      }
      let target: string;
      try {
        target = multipartPath(objectPath, scope.workspace.storagePrefix);
      } catch (err) {
        file.resume();
        return settle(err);
      }
      services.datasets.upload(scope, target, file).then((r) => settle(null, r), settle);
    });
    bb.on("close", () => {
      if (!started) settle(new ApiError(400, "invalid_request", msg("files.no_file_field"), [detail("file", msg("detail.required"))]));
    });
    bb.on("error", (err) =>
      settle(new ApiError(400, "invalid_request", msg("files.multipart_unreadable", { why: (err as Error).message }))),
    );
    req.pipe(bb);
  });
}

export const fileRoutes = [
  defineRoute({
    method: "put",
    path: "/v1/files/{user_dir}/{experiment_dir}/{file}",
    auth: "any",
    scope: "build",
    summary: "Upload a dataset zip (raw body), streamed to the bucket",
    tags: ["files"],
    params: fileParams,
    rawBody: { contentType: "application/zip", description: "the zip file's bytes" },
    responses: { 201: { description: "stored", schema: uploadResult } },
    handler: async ({ req, params, auth, services }) => {
      const objectPath = resolveUploadPath(
        `${params.user_dir}/${params.experiment_dir}/${params.file}`,
        auth.workspace.storagePrefix,
        "path",
      );
      const result = await services.datasets.upload(auth, objectPath, req, contentLength(req));
      await services.audit.record(actorOf(auth), "file_uploaded", undefined, { size: result.size, sha256: result.sha256 });
      return { status: 201, body: result };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/files",
    auth: "any",
    scope: "build",
    summary:
      "Upload a dataset zip as multipart/form-data: field `path` (<experiment_dir>/<file>.zip or the full zip_gcloud), then field `file`",
    tags: ["files"],
    rawBody: { contentType: "multipart/form-data", description: "fields path, then file" },
    responses: { 201: { description: "stored", schema: uploadResult } },
    handler: async ({ req, auth, services }) => {
      const declared = contentLength(req);
      // The multipart envelope adds a few hundred bytes; the exact limit is enforced on the file's bytes.
      if (declared !== undefined && declared > services.config.MAX_UPLOAD_BYTES + 64 * 1024) {
        throw new ApiError(
          413,
          "payload_too_large",
          msg("dataset.upload_over_limit", { max: services.config.MAX_UPLOAD_BYTES }),
          undefined,
          { connection: "close" },
        );
      }
      const result = await multipartUpload(req, services, auth);
      await services.audit.record(actorOf(auth), "file_uploaded", undefined, { size: result.size, sha256: result.sha256 });
      return { status: 201, body: result };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/files",
    auth: "any",
    scope: "read",
    summary: "Your uploaded files with their sizes and sha256",
    tags: ["files"],
    handler: async ({ auth, services }) => ({ body: { files: await services.datasets.listFiles(auth) } }),
  }),
  defineRoute({
    method: "delete",
    path: "/v1/files/{user_dir}/{experiment_dir}/{file}",
    auth: "any",
    scope: "build",
    summary:
      "Delete one of your uploaded files; 409 dataset_in_use while a queued or running experiment reads it, unless force=true (which cancels those experiments first)",
    tags: ["files"],
    params: fileParams,
    query: deleteQuery,
    responses: { 204: { description: "deleted" }, 409: { description: "dataset_in_use: the experiments reading it are named" } },
    handler: async ({ params, query, auth, services }) => {
      const objectPath = resolveZipPath(`${params.user_dir}/${params.experiment_dir}/${params.file}`, auth.workspace.storagePrefix, "path");
      const done = await services.datasets.deleteUploads(auth, objectPath, { force: query.force });
      await services.audit.record(actorOf(auth), "file_deleted", undefined, {
        files: done.deleted.length,
        cancelled_experiments: done.cancelled_experiments,
      });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/files/{user_dir}/{experiment_dir}",
    auth: "any",
    scope: "build",
    summary:
      "Delete a whole folder of your uploads; 409 dataset_in_use while a queued or running experiment reads a file in it, unless force=true",
    tags: ["files"],
    params: folderParams,
    query: deleteQuery,
    responses: {
      200: { description: "deleted", schema: fileDeletionSchema },
      409: { description: "dataset_in_use: the experiments reading it are named" },
    },
    handler: async ({ params, query, auth, services }) => {
      const prefix = resolveFolderPath(params.user_dir, params.experiment_dir, auth.workspace.storagePrefix);
      const done = await services.datasets.deleteUploads(auth, prefix, { force: query.force });
      await services.audit.record(actorOf(auth), "folder_deleted", undefined, {
        files: done.deleted.length,
        cancelled_experiments: done.cancelled_experiments,
      });
      return { body: done };
    },
  }),
];
