import { z } from "zod";
import { experimentIdParams as params } from "../params.js";
import { actorOf } from "../../audit/audit-log.js";
import { defineRoute } from "../route.js";
import { modelSchema } from "../response-schemas.js";

export const modelRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/models",
    auth: "any",
    summary: "Your published models (the newest version of each experiment)",
    tags: ["models"],
    responses: {
      200: {
        description: "models; one whose manifest cannot be read carries `error` instead",
        schema: z.object({ data: z.array(modelSchema.partial().extend({ error: z.string().optional() })) }),
      },
    },
    handler: async ({ services, auth }) => ({ body: { data: await services.serving.catalog.list(auth.userId) } }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}",
    auth: "any",
    summary: "One model: kind, inputs, classes, thresholds, metrics, version",
    tags: ["models"],
    params,
    responses: { 200: { description: "the model", schema: modelSchema } },
    handler: async ({ services, auth, params }) => ({ body: await services.serving.catalog.describe(auth.userId, params.experiment_id) }),
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
      const { stream, size, filename } = await services.serving.catalog.openModelFile(auth.userId, params.experiment_id);
      await services.audit.record(actorOf(auth), "model_downloaded", `experiment ${params.experiment_id}`, { file: filename });
      res.status(200).set({
        "content-type": "application/octet-stream",
        "content-length": String(size),
        "content-disposition": `attachment; filename="${filename}"`,
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
