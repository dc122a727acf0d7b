import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { BATCH_CONTENT_TYPES } from "../../batches/service.js";
import { ApiError } from "../../errors.js";
import { experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";

// Batch scoring: POST the rows (CSV or .xlsx) or a zip of images, follow the batch, download results.csv.

const batchSchema = z.object({
  batch_id: z.string().uuid(),
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
});

const batchParams = z.object({ batch_id: z.string().max(64) });

export const batchRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/batch",
    auth: "any",
    summary:
      "Score a whole file with the current model version: rows (text/csv or .xlsx) for a table model, a zip of images for an image model",
    tags: ["models"],
    params: experimentIdParams,
    rawBody: {
      contentType: "text/csv",
      description: "text/csv, application/vnd.openxmlformats-officedocument.spreadsheetml.sheet (first sheet) or application/zip (images)",
    },
    responses: {
      202: { description: "queued: follow GET /v1/batches/{batch_id}", schema: batchSchema },
      409: { description: "model_not_ready: no published model yet" },
      415: { description: "unsupported_media_type: not CSV, .xlsx or zip, or not the kind of input this model takes" },
    },
    handler: async ({ req, params, auth, services }) => {
      const type = (req.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      const kind = BATCH_CONTENT_TYPES[type];
      if (!kind) {
        req.resume();
        throw new ApiError(
          415,
          "unsupported_media_type",
          `send the file with Content-Type ${Object.keys(BATCH_CONTENT_TYPES).join(", ")} (got ${type || "none"})`,
        );
      }
      const row = await services.batches.create(auth.userId, params.experiment_id, kind, req);
      await services.audit.record(actorOf(auth), "batch_scored", `experiment ${params.experiment_id}`, { batch_id: row.id, input: kind });
      return { status: 202, headers: { location: `/v1/batches/${row.id}` }, body: services.batches.view(row) };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/batches",
    auth: "any",
    summary: "The experiment's batches, newest first (the last 20)",
    tags: ["models"],
    params: experimentIdParams,
    responses: { 200: { description: "batches", schema: z.object({ data: z.array(batchSchema) }) } },
    handler: async ({ params, auth, services }) => ({
      body: { data: (await services.batches.list(auth.userId, params.experiment_id)).map((r) => services.batches.view(r)) },
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/batches/{batch_id}",
    auth: "any",
    summary: "A batch's status and progress",
    tags: ["models"],
    params: batchParams,
    responses: { 200: { description: "the batch", schema: batchSchema } },
    handler: async ({ params, auth, services }) => ({
      headers: { "cache-control": "no-store" },
      body: services.batches.view(await services.batches.get(auth.userId, params.batch_id)),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/batches/{batch_id}/results.csv",
    auth: "any",
    summary: "The results of a finished batch: one line per input (id, prediction, each class's score, out_of_range, error)",
    tags: ["models"],
    params: batchParams,
    responses: { 200: { description: "results.csv", contentType: "text/csv" }, 409: { description: "batch_not_done" } },
    handler: async ({ params, auth, services, res }) => {
      const stream = await services.batches.results(auth.userId, params.batch_id);
      res.status(200).set({
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="batch-${params.batch_id}-results.csv"`,
        "cache-control": "no-store",
      });
      await new Promise<void>((resolve, reject) => {
        stream.on("error", reject);
        res.on("finish", resolve);
        res.on("close", resolve);
        stream.pipe(res);
      });
    },
  }),
];
