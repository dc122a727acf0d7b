import { z } from "zod";
import { SPLIT_COL_DOC } from "../../experiments/request.js";
import { defineRoute } from "../route.js";

// Dataset checks without training: the full report for a zip, and its CSV's columns for a form.

const name = z.string().trim().min(1, "must be a non-empty column name");

const validateBody = z
  .object({
    zip_gcloud: z.string().min(1, "must be the bucket path of the uploaded zip"),
    task: z.enum(["vision", "data"], { error: "must be vision or data" }),
    label_cols: z.array(name).min(1, "must list at least one label column"),
    images_col: name.nullish(),
    data_cols: z.array(name).nullish(),
    split_col: name.nullish().describe(SPLIT_COL_DOC),
    type_of_experiment: z.enum(["classification", "detection"], { error: "must be classification or detection" }).default("classification"),
    model_type: z.union([z.literal(0), z.literal(1)], { error: "must be 0 (classification) or 1 (regression)" }).default(0),
  })
  .superRefine((b, ctx) => {
    if (b.task === "vision" && !b.images_col) ctx.addIssue({ code: "custom", path: ["images_col"], message: "required for task vision" });
    if (b.task === "data" && !b.data_cols?.length) ctx.addIssue({ code: "custom", path: ["data_cols"], message: "required for task data" });
    if (b.type_of_experiment === "detection" && b.task !== "vision") ctx.addIssue({ code: "custom", path: ["task"], message: "detection needs task vision" });
    if (b.split_col && b.type_of_experiment === "detection") ctx.addIssue({ code: "custom", path: ["split_col"], message: "is not supported for detection yet" });
  });

const problem = z.object({
  severity: z.enum(["error", "warning"]),
  code: z.string(),
  message: z.string(),
  row: z.number().optional(),
  column: z.string().optional(),
  path: z.string().optional(),
});
const report = z.object({
  valid: z.boolean(),
  errors: z.array(problem),
  warnings: z.array(problem),
  errors_omitted: z.number(),
  warnings_omitted: z.number(),
  summary: z.record(z.string(), z.unknown()),
});

export const datasetRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/datasets/validate",
    auth: "api_key",
    summary: "Check an uploaded zip (CSV, images, boxes) and report every problem; no training",
    tags: ["datasets"],
    body: validateBody,
    responses: { 200: { description: "the report (valid or not)", schema: report } },
    handler: async ({ body, auth, services }) => {
      const { zip_gcloud, ...request } = body;
      return { body: await services.datasets.validate(auth.userId, zip_gcloud, request) };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/datasets/columns",
    auth: "api_key",
    summary: "The CSV's columns in an uploaded zip: name, type, examples, missing count; and the row count",
    tags: ["datasets"],
    query: z.object({ zip_gcloud: z.string().min(1, "must be the bucket path of the uploaded zip") }),
    responses: {
      200: {
        description: "columns",
        schema: z.object({
          csv_path: z.string().nullable(),
          columns: z.array(z.object({ name: z.string(), type: z.string(), examples: z.array(z.string()), missing: z.number() })),
          rows: z.number(),
        }),
      },
    },
    handler: async ({ query, auth, services }) => ({ body: await services.datasets.columns(auth.userId, query.zip_gcloud) }),
  }),
];
