import { z } from "zod";
import { datasetFieldRules, experimentRequestFields } from "../../experiments/request.js";
import { SAMPLES } from "../../datasets/sample-datasets.js";
import { datasetTask } from "../../experiments/study.js";
import { defineRoute } from "../route.js";
import { datasetReportSchema } from "../response-schemas.js";
import { invalid } from "../../errors.js";
import { reportIn } from "../../experiments/view-language.js";
import { preferredLanguage } from "../error-language.js";

// Dataset checks without training: the full report for a zip, and its CSV's columns for a form.

// The experiment request's own fields and rules (a `pick`, not a second copy): what validates here is what
// POST /v1/experiments accepts. model_type may be left out here (classification), since no model is built.
const validateBody = experimentRequestFields
  .pick({
    zip_gcloud: true,
    task: true,
    label_cols: true,
    images_col: true,
    data_cols: true,
    split_col: true,
    subgroup_cols: true,
    type_of_experiment: true,
    model_type: true,
  })
  .extend({ model_type: experimentRequestFields.shape.model_type.default(0) })
  .superRefine(datasetFieldRules);

const sampleSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  task: z.literal("data"),
  label_col: z.string(),
  rows: z.number(),
  licence: z.string().describe("the data's licence and citation"),
  source: z.string(),
});

export const datasetRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/datasets/validate",
    auth: "any",
    scope: "build",
    summary: "Check an uploaded zip (CSV, images, boxes) and report every problem; no training",
    tags: ["datasets"],
    body: validateBody,
    responses: { 200: { description: "the report (valid or not)", schema: datasetReportSchema } },
    handler: async ({ body, auth, services, req }) => {
      // Each problem's message in the caller's language (Accept-Language), from its catalog key and values.
      const report = await services.datasets.validate(auth, body.zip_gcloud, datasetTask(body));
      return { body: reportIn(report, preferredLanguage(req.get("accept-language")))! };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/datasets/columns",
    auth: "any",
    scope: "read",
    summary: "The CSV's columns in an uploaded zip: name, type, examples, missing count; and the row count",
    tags: ["datasets"],
    query: z.object({ zip_gcloud: z.string().min(1, invalid("validation.bucket_path_of_zip")) }),
    responses: {
      200: {
        description: "columns",
        schema: z.object({
          csv_path: z.string().nullable(),
          columns: z.array(
            z.object({
              name: z.string(),
              type: z.string(),
              examples: z.array(z.string()),
              missing: z.number(),
              value_counts: z
                .record(z.string(), z.number())
                .optional()
                .describe(
                  "rows per value (trimmed), for a column with at most 20 distinct values that repeat (at least twice as many rows as values)",
                ),
            }),
          ),
          rows: z.number(),
        }),
      },
    },
    handler: async ({ query, auth, services }) => ({ body: await services.datasets.columns(auth, query.zip_gcloud) }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/datasets/samples",
    auth: "any",
    scope: "read",
    summary: "Public sample datasets Builder can put in your folder to try a build (shipped inside a package; nothing is downloaded)",
    tags: ["datasets"],
    responses: { 200: { description: "the samples", schema: z.object({ data: z.array(sampleSchema) }) } },
    handler: async () => ({ body: { data: SAMPLES } }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/datasets/samples/{sample_id}",
    auth: "any",
    scope: "build",
    summary: "Put a sample dataset in your folder (samples/<sample_id>.zip) and answer as an upload does, with the data's licence",
    tags: ["datasets"],
    params: z.object({ sample_id: z.string().max(100) }),
    responses: {
      201: {
        description: "stored; build from zip_gcloud",
        schema: z.object({
          zip_gcloud: z.string(),
          size: z.number(),
          sha256: z.string(),
          note: z.string().optional(),
          licence: z.string(),
        }),
      },
      404: { description: "not_found: no such sample" },
    },
    handler: async ({ params, auth, services }) => ({
      status: 201,
      body: await services.datasets.loadSample(auth, params.sample_id),
    }),
  }),
];
