import { z } from "zod";
import { BucketNotFoundError } from "../../storage/bucket.js";
import type { ModelRow } from "../../serving/model-repository.js";
import { classNames, checkManifest } from "../../serving/manifest.js";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../route.js";

const params = z.object({ experiment_id: z.coerce.number().int().positive("must be a positive integer").max(2_147_483_647) });

/** What a caller needs to call /predict: kind, inputs (data_cols or image spec), classes, thresholds, metrics, version. */
function modelView(row: ModelRow) {
  const m = checkManifest(row.manifest);
  return {
    experiment_id: row.experimentId,
    version: row.version,
    kind: m.kind,
    problem: m.problem,
    created_at: row.createdAt,
    inputs: {
      name: m.input.name,
      ...(m.input.image ? { image: m.input.image, message: "an image URI: https://, http://, data:image/...;base64, or gs://<bucket>/<your path>" } : {}),
      ...(m.input.columns
        ? {
            data_cols: m.input.columns.map((c) => c.name),
            columns: m.input.columns,
            message: "an array of numbers in data_cols order; categorical columns take their integer code",
          }
        : {}),
    },
    classes: classNames(m),
    thresholds: m.thresholds ?? null,
    threshold_rule: m.threshold_rule ?? null,
    metric: m.metric ?? null,
    metrics: m.metrics,
    ...(m.detection ? { detection: m.detection } : {}),
    outputs: m.outputs,
  };
}

export const modelRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/models",
    auth: "any",
    summary: "Your published models (the newest version of each experiment)",
    tags: ["models"],
    handler: async ({ services, auth }) => {
      const rows = await services.serving.repo.listLatest(auth.userId);
      // One unreadable manifest must not hide the caller's other models: list it with what the row knows.
      const view = (row: ModelRow) => {
        try {
          return modelView(row);
        } catch (err) {
          return { experiment_id: row.experimentId, version: row.version, kind: row.kind, created_at: row.createdAt, error: (err as Error).message };
        }
      };
      return { body: { data: rows.map(view) } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}",
    auth: "any",
    summary: "One model: kind, inputs, classes, thresholds, metrics, version",
    tags: ["models"],
    params,
    handler: async ({ services, auth, params }) => {
      const row = await services.serving.repo.latest(auth.userId, params.experiment_id);
      if (!row) throw new ApiError(404, "not_found", `experiment ${params.experiment_id} has no published model`);
      return { body: modelView(row) };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/download",
    auth: "any",
    summary: "Download the ONNX file of the newest published model",
    tags: ["models"],
    params,
    responses: { 200: { description: "the ONNX model", contentType: "application/octet-stream" } },
    handler: async ({ services, auth, params, res }) => {
      const row = await services.serving.repo.latest(auth.userId, params.experiment_id);
      if (!row) throw new ApiError(404, "not_found", `experiment ${params.experiment_id} has no published model`);
      const m = checkManifest(row.manifest);
      const objectPath = `${row.storePath.replace(/\/+$/, "")}/${m.model_file}`;
      const st = await services.bucket.stat(objectPath);
      if (!st) throw new ApiError(404, "not_found", "the model file is missing from storage");
      let stream;
      try {
        stream = await services.bucket.read(objectPath);
      } catch (err) {
        if (err instanceof BucketNotFoundError) throw new ApiError(404, "not_found", "the model file is missing from storage");
        throw err;
      }
      res.status(200).set({
        "content-type": "application/octet-stream",
        "content-length": String(st.size),
        "content-disposition": `attachment; filename="experiment-${row.experimentId}-v${row.version}.onnx"`,
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
