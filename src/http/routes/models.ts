import { z } from "zod";
import { experimentId, experimentIdParams as params } from "../params.js";
import { actorOf } from "../../audit/audit-log.js";
import { defineRoute } from "../route.js";
import { modelSchema, modelVersionSchema, modelVersionsSchema, operatingPointExplorerSchema } from "../response-schemas.js";
import { invalid } from "../../errors.js";

const fraction = z
  .number(invalid("validation.number_between_0_and_1"))
  .min(0, invalid("validation.between_0_and_1"))
  .max(1, invalid("validation.between_0_and_1"));

/** POST /v1/models/{experiment_id}/operating-point: the rule, and its target or threshold where it needs one. */
export const operatingPointBodySchema = z
  .object({
    rule: z
      .enum(
        ["sensitivity", "specificity", "youden", "f1", "threshold"],
        invalid("validation.one_of", { list: "sensitivity, specificity, youden, f1, threshold" }),
      )
      .describe(
        "sensitivity / specificity: the highest (lowest) validation threshold whose sensitivity (specificity) is at least target; youden: the highest sensitivity + specificity - 1; f1: the highest F1 of the positive class; threshold: the given threshold",
      ),
    target: fraction.optional().describe("sensitivity and specificity: the figure to reach on the validation data, 0 to 1"),
    threshold: fraction
      .optional()
      .describe("rule threshold: a patient whose probability of the positive class is at least this is flagged"),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.rule === "sensitivity" || b.rule === "specificity") && b.target === undefined)
      ctx.addIssue({ code: "custom", path: ["target"], message: invalid("validation.required_with_rule", { rule: b.rule }) });
    if (b.rule === "threshold" && b.threshold === undefined)
      ctx.addIssue({ code: "custom", path: ["threshold"], message: invalid("validation.required_with_rule", { rule: "threshold" }) });
  });

const versionParams = z.object({
  experiment_id: experimentId,
  version: z.coerce.number().int(invalid("detail.positive_integer")).positive(invalid("detail.positive_integer")),
});

export const modelRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/models",
    auth: "any",
    scope: "read",
    summary: "Your published models (the current version of each experiment: the newest, unless an earlier one was made current again)",
    tags: ["models"],
    responses: {
      200: {
        description: "models; one whose manifest cannot be read carries `error` instead",
        schema: z.object({ data: z.array(modelSchema.partial().extend({ error: z.string().optional() })) }),
      },
    },
    handler: async ({ services, auth }) => ({ body: { data: await services.serving.catalog.list(auth) } }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}",
    auth: "any",
    scope: "read",
    summary: "One model: kind, inputs, classes, thresholds, metrics, version",
    tags: ["models"],
    params,
    responses: { 200: { description: "the model", schema: modelSchema } },
    handler: async ({ services, auth, params }) => ({ body: await services.serving.catalog.describe(auth, params.experiment_id) }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/operating-point",
    auth: "any",
    scope: "read",
    summary:
      "The operating point explorer's data (binary models): the validation (or out-of-fold) counts at every threshold, never the test set's, and the current threshold",
    tags: ["models"],
    params,
    responses: {
      200: {
        description: "available: false (with a message) when the model has no operating point to move",
        schema: operatingPointExplorerSchema,
      },
    },
    handler: async ({ services, auth, params }) => ({ body: await services.operatingPoints.explorer(auth, params.experiment_id) }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/operating-point",
    auth: "any",
    scope: "build",
    summary:
      "Save an operating point (binary models): a threshold chosen on the validation data by a rule; publishes a new model version (no retraining) that /predict uses at once on every replica, with its test figures",
    tags: ["models"],
    params,
    body: operatingPointBodySchema,
    responses: {
      201: { description: "the new version, current, with its validation and test figures", schema: modelVersionSchema },
      409: { description: "no published model, or one built before operating points (rebuild it)" },
      422: { description: "not a binary classification model, or no threshold reaches the target" },
    },
    handler: async ({ services, auth, params, body }) => services.operatingPoints.save(auth, params.experiment_id, body, actorOf(auth)),
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/versions",
    auth: "any",
    scope: "read",
    summary:
      "Every version of the experiment's model, newest first, with its thresholds and saved operating point; `current` is the one /predict uses",
    tags: ["models"],
    params,
    responses: { 200: { description: "the versions", schema: modelVersionsSchema } },
    handler: async ({ services, auth, params }) => ({ body: await services.operatingPoints.versions(auth, params.experiment_id) }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/versions/{version}/current",
    auth: "any",
    scope: "build",
    summary: "Make a version current again (rollback): /predict answers with it at once, on every replica",
    tags: ["models"],
    params: versionParams,
    responses: { 200: { description: "the version, now current", schema: modelVersionSchema } },
    handler: async ({ services, auth, params }) => ({
      body: await services.operatingPoints.makeCurrent(auth, params.experiment_id, params.version, actorOf(auth)),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/download",
    auth: "any",
    scope: "read",
    summary: "Download the ONNX file of the current model version",
    tags: ["models"],
    params,
    responses: { 200: { description: "the ONNX model", contentType: "application/octet-stream" } },
    handler: async ({ services, auth, params, res }) => {
      const { stream, size, filename } = await services.serving.catalog.openModelFile(auth, params.experiment_id);
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
