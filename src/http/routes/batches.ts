import type { Readable } from "node:stream";
import type { Response } from "express";
import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { BATCH_CONTENT_TYPES } from "../../batches/service.js";
import { ApiError, msg, invalid } from "../../errors.js";
import { preferredLanguage } from "../error-language.js";
import { experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";

// Batch scoring: POST the rows (CSV or .xlsx) or a zip of images, follow the batch, download results.csv.

const batchSchema = z.object({
  batch_id: z.string().uuid(),
  file_name: z.string().nullable().describe("the sent file's name, as given in ?file_name="),
  experiment_id: z.number().int(),
  model_version: z.number().int().describe("the model version that scores it (the newest when the batch was sent)"),
  input: z.enum(["table", "xlsx", "images"]),
  status: z.enum(["queued", "running", "done", "failed"]),
  total: z.number().int().nullable().describe("inputs to score, once known"),
  done: z.number().int(),
  failed: z.number().int().describe("inputs with no score: the error column of results.csv says why"),
  flagged: z.number().int().describe("rows with a value outside the training data's range (out_of_range in results.csv)"),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
  results_url: z.string().nullable(),
  overlays: z.boolean().describe("sent with ?overlays=true: overlays.zip is made beside results.csv"),
  overlays_url: z.string().nullable().describe("overlays.zip, once done (a batch sent with ?overlays=true)"),
  send_back: z.boolean().describe("sent with ?send_back=true: each DICOM's answer is written into its study in the PACS"),
  pacs_sent: z.number().int().describe("send_back: images whose structured report reached the PACS"),
  pacs_failed: z
    .number()
    .int()
    .describe("send_back: images whose report did not (not DICOM, or the PACS refused it): the audit log says why"),
});

const sseHeaders = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** Streams a stored file to the response, as a download. */
async function download(res: Response, stream: Readable, headers: Record<string, string>) {
  res.status(200).set({ ...headers, "cache-control": "no-store" });
  await new Promise<void>((resolve, reject) => {
    stream.on("error", reject);
    res.on("finish", resolve);
    res.on("close", () => {
      stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}

const batchParams = z.object({ batch_id: z.string().max(64) });

export const batchRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/batch",
    auth: "any",
    scope: "build",
    summary:
      "Score a whole file with the current model version: rows (text/csv or .xlsx) for a table model, a zip of images for an image model",
    tags: ["models"],
    params: experimentIdParams,
    query: z.object({
      file_name: z
        .string()
        .max(255)
        .regex(/^[^\u0000-\u001f\u007f]+$/, invalid("validation.file_name"))
        .optional()
        .describe("the file's name (clinic-export.csv), shown in the list of batches so a team knows which file each was"),
      overlays: z
        .enum(["true", "false"])
        .optional()
        .describe(
          "true: an image classification model also makes overlays.zip, one PNG per image with the Grad-CAM map of its predicted class over it (at most BATCH_OVERLAYS_MAX_IMAGES images)",
        ),
      send_back: z
        .enum(["true", "false"])
        .optional()
        .describe(
          "true: each DICOM image's answer is also written into its study in your PACS (Settings → PACS) as a structured report, and a secondary capture when the connection asks for one, with UIDs derived from the model version and the source instance, so sending the same file again writes the same objects (docs/pacs.md)",
        ),
    }),
    rawBody: {
      contentType: "text/csv",
      description: "text/csv, application/vnd.openxmlformats-officedocument.spreadsheetml.sheet (first sheet) or application/zip (images)",
    },
    responses: {
      202: { description: "queued: follow GET /v1/batches/{batch_id}", schema: batchSchema },
      400: {
        description:
          "invalid_request: overlays=true for a model without Grad-CAM maps (a table, detection or regression model); send_back_unavailable: send_back=true without a PACS or for a table",
      },
      409: { description: "model_not_ready: no published model yet" },
      413: {
        description:
          "too_many_images: more images than BATCH_OVERLAYS_MAX_IMAGES in a batch with overlays; payload_too_large: a file over MAX_UPLOAD_BYTES, an .xlsx over 50 MiB",
      },
      415: { description: "unsupported_media_type: not CSV, .xlsx or zip, or not the kind of input this model takes" },
    },
    handler: async ({ req, params, query, auth, services }) => {
      const type = (req.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      const kind = BATCH_CONTENT_TYPES[type];
      if (!kind) {
        req.resume();
        throw new ApiError(
          415,
          "unsupported_media_type",
          msg("batch.send_content_type", { types: Object.keys(BATCH_CONTENT_TYPES).join(", "), got: type || "none" }),
        );
      }
      const overlays = query.overlays === "true";
      const sendBack = query.send_back === "true";
      const row = await services.batches.create(auth, params.experiment_id, kind, req, {
        overlays,
        fileName: query.file_name,
        sendBack: sendBack ? actorOf(auth) : undefined,
      });
      await services.audit.record(actorOf(auth), "batch_scored", `experiment ${params.experiment_id}`, {
        batch_id: row.id,
        input: kind,
        ...(overlays ? { overlays } : {}),
        ...(sendBack ? { send_back: true } : {}),
      });
      return { status: 202, headers: { location: `/v1/batches/${row.id}` }, body: services.batches.view(row) };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/batches",
    auth: "any",
    scope: "read",
    summary: "The experiment's batches, newest first (the last 20)",
    tags: ["models"],
    params: experimentIdParams,
    responses: { 200: { description: "batches", schema: z.object({ data: z.array(batchSchema) }) } },
    handler: async ({ req, params, auth, services }) => {
      const lang = preferredLanguage(req.get("accept-language"));
      const rows = await services.batches.list(auth, params.experiment_id);
      return { body: { data: rows.map((r) => services.batches.view(r, lang)) } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/batches/{batch_id}",
    auth: "any",
    scope: "read",
    summary: "A batch's status and progress",
    tags: ["models"],
    params: batchParams,
    responses: { 200: { description: "the batch", schema: batchSchema } },
    handler: async ({ req, params, auth, services }) => ({
      headers: { "cache-control": "no-store" },
      body: services.batches.view(await services.batches.get(auth, params.batch_id), preferredLanguage(req.get("accept-language"))),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/batches/{batch_id}/events",
    auth: "any",
    scope: "read",
    summary:
      "Server-Sent Events: the batch's state now and at each change (event: progress, the batch as GET /v1/batches/{id} gives it: done of total, status), then event: done or event: failed with the same, and the stream ends; at most EVENT_STREAMS_PER_USER streams open at once, experiments' and batches' together (429 too_many_streams); one open after EVENT_STREAM_MAX_S ends with event: reconnect",
    tags: ["models"],
    params: batchParams,
    responses: {
      200: { description: "text/event-stream", contentType: "text/event-stream" },
      429: { description: "too_many_streams: EVENT_STREAMS_PER_USER streams already open" },
    },
    handler: async ({ req, services, auth, params, res }) => {
      const lang = preferredLanguage(req.get("accept-language"));
      // The owner first (another user's batch is a 404), then a slot: as the experiments' stream does.
      const row = await services.batches.get(auth, params.batch_id);
      const release = services.batches.openEventStream(auth.userId);
      const gone = new AbortController();
      res.on("close", () => gone.abort());
      if (!res.socket || res.socket.destroyed) gone.abort();
      try {
        res.status(200).set(sseHeaders);
        res.flushHeaders();
        for await (const item of services.batches.events(row, gone.signal, lang)) {
          if ("keepAlive" in item) res.write(": keep-alive\n\n");
          else if ("lifetimeEnded" in item) res.write(`event: reconnect\ndata: ${JSON.stringify({ reason: "max_lifetime" })}\n\n`);
          else if (item.event === "deleted")
            res.write(
              `id: ${item.id}\nevent: deleted\ndata: ${JSON.stringify({ batch_id: item.batchId, reason: "its experiment was deleted" })}\n\n`,
            );
          else res.write(`id: ${item.id}\nevent: ${item.event}\ndata: ${JSON.stringify(item.view)}\n\n`);
        }
      } finally {
        release();
      }
      res.end();
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/batches/{batch_id}/overlays.zip",
    auth: "any",
    scope: "read",
    summary:
      "The Grad-CAM overlays of a finished batch sent with ?overlays=true: one PNG per image, named as the image with .png (scans/p01.jpg -> scans/p01.png), the map of its predicted class over the image; results.csv's overlay column names each",
    tags: ["models"],
    params: batchParams,
    responses: {
      200: { description: "overlays.zip", contentType: "application/zip" },
      404: { description: "not_found: no such batch, or one sent without overlays" },
      409: { description: "batch_not_done" },
    },
    handler: async ({ params, auth, services, res }) => {
      const { stream, size } = await services.batches.overlays(auth, params.batch_id);
      await download(res, stream, {
        "content-type": "application/zip",
        "content-disposition": `attachment; filename="batch-${params.batch_id}-overlays.zip"`,
        ...(size !== null ? { "content-length": String(size) } : {}),
      });
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/batches/{batch_id}/results.csv",
    auth: "any",
    scope: "read",
    summary:
      "The results of a finished batch: one line per input (id, prediction, each class's score, out_of_range, error; with overlays, overlay and overlay_class); detection: one line per box (image, box, class, score, x_min, y_min, x_max, y_max, error)",
    tags: ["models"],
    params: batchParams,
    responses: { 200: { description: "results.csv", contentType: "text/csv" }, 409: { description: "batch_not_done" } },
    handler: async ({ params, auth, services, res }) => {
      const stream = await services.batches.results(auth, params.batch_id);
      await download(res, stream, {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="batch-${params.batch_id}-results.csv"`,
      });
    },
  }),
];
