import { createHash } from "node:crypto";
import { z } from "zod";
import { objectPathSegments, withoutBucketUri } from "../storage/bucket.js";
import { dicomFramesField, dicomWindowField } from "./dicom-options.js";

// POST /v1/experiments: the seed's fields, each validated; cross-field rules are added with superRefine so that
// every bad field still lands in the one 400 (zod reports them all together).

const nonEmptyName = z.string().trim().min(1, "must be a non-empty column name");

/** Also the OpenAPI description of the field (the datasets validate route reuses it). */
export const SPLIT_COL_DOC =
  "Optional CSV column saying which part each row belongs to: train, validation (or val) or test, any case " +
  "(like Google AutoML's ML_USE). All rows of a patient must name the same part, and each part needs a patient. " +
  "Unset: Builder makes its own seeded, patient-grouped 70/15/15 split. Classification and regression only (not detection), Builder studies only.";

/** What optimization_metric means for each problem (src/experiments/study.ts is the one place that applies it). */
export const OPTIMIZATION_METRIC_DOC =
  "Classification: the metric trials are selected on and decision thresholds are chosen for (AUC: Youden's J). " +
  "Regression (model_type 1): accepted and not used; models are always selected on validation RMSE (the study's metric is rmse). " +
  "Detection: models are selected on validation mAP@0.5 (the study's metric is map50); the box score threshold follows " +
  "Precision or Recall (the best one with the other at least 0.5), while F-macro and AUC (no meaning for boxes) both pick the best F1.";

export const POSITIVE_CLASS_DOC =
  "Binary classification only: the label value, as written in the CSV, that counts as positive (the disease, the " +
  "finding): sensitivity, specificity, PPV and NPV are reported for it. Unset: the less frequent class (on a tie, the " +
  "second in sort order). A value the label column does not hold ends the experiment as invalid_dataset.";

export const SUBGROUP_COLS_DOC =
  "Optional CSV columns to report test performance by, e.g. sex, age, site, scanner (for images: columns beside the image " +
  "path). Per group: patients, prevalence, AUC and sensitivity/specificity at the model's thresholds with 95% intervals, and " +
  "a flag where a group is clearly worse than the rest (docs/metrics.md, Subgroups). A column may be a feature (data_cols) " +
  "or not. Numbers with more than 10 distinct values are cut in quartiles of the test patients (or at subgroup_bins); " +
  "anything else is a category: at most 12 groups, values held by fewer than 20 test patients pooled as 'other'. " +
  "Binary and multiclass classification only (not regression, detection or several label columns). At most 10 columns.";

export const SUBGROUP_BINS_DOC =
  'Optional, per subgroup column: cut points for a numeric column instead of its quartiles, e.g. {"Age": [40, 60]} ' +
  "gives <40, 40–<60 and ≥60 (a value equal to a cut point is in the upper group). Each key must be in subgroup_cols.";

/** The seed's fields, one rule each; `pick` from here for any route that takes some of them (datasets/validate). */
export const experimentRequestFields = z.object({
  zip_gcloud: z
    .string()
    .min(1, "must be the bucket path of the uploaded zip")
    .superRefine((value, ctx) => {
      try {
        objectPathSegments(zipObjectPath(value));
      } catch (err) {
        ctx.addIssue({ code: "custom", message: `not a bucket path: ${(err as Error).message}` });
      }
      if (!/\.zip$/i.test(value)) ctx.addIssue({ code: "custom", message: "must name a .zip file" });
    }),
  label_cols: z.array(nonEmptyName).min(1, "must list at least one label column"),
  images_col: nonEmptyName.nullish(),
  data_cols: z.array(nonEmptyName).nullish(),
  split_col: nonEmptyName.nullish().describe(SPLIT_COL_DOC),
  subgroup_cols: z
    .array(nonEmptyName)
    .max(10, "must list at most 10 subgroup columns")
    .refine((cols) => new Set(cols).size === cols.length, "must not name a column twice")
    .nullish()
    .describe(SUBGROUP_COLS_DOC),
  subgroup_bins: z
    .record(
      z.string(),
      z
        .array(z.number({ error: "must be numbers (cut points)" }).finite(), { error: "must be a list of cut points" })
        .min(1, "must list at least one cut point")
        .max(20, "must list at most 20 cut points"),
    )
    .nullish()
    .describe(SUBGROUP_BINS_DOC),
  model_type: z.union([z.literal(0), z.literal(1)], { error: "must be 0 (classification) or 1 (regression)" }),
  optimization_type: z.union([z.literal(0), z.literal(1)], { error: "must be 0 (best quality) or 1 (fastest)" }),
  experiment_id: z
    .number({ error: "must be a positive integer" })
    .int("must be a positive integer")
    .positive("must be a positive integer")
    .max(2_147_483_647),
  user_token: z.string().optional(),
  user_id: z.string().min(1, "must be your user id"),
  study_type: z
    .string({ error: "must be Builder or Retrospective" })
    .transform((s) => (s.toLowerCase() === "builder" ? "Builder" : s))
    .pipe(z.enum(["Builder", "Retrospective"], { error: "must be Builder or Retrospective" })),
  type_of_experiment: z.enum(["classification", "detection"], { error: "must be classification or detection" }).default("classification"),
  task: z.enum(["vision", "data"], { error: "must be vision or data" }),
  optimization_metric: z
    .enum(["AUC", "F-macro", "Precision", "Recall"], { error: "must be AUC, F-macro, Precision or Recall" })
    .describe(OPTIMIZATION_METRIC_DOC),
  time_budget_s: z
    .number()
    .positive("must be a positive number of seconds")
    .max(7 * 24 * 3600)
    .optional(),
  callback_url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
  source_experiment_id: z.number().int().positive("must be a positive integer").optional(),
  positive_class: z
    .string({ error: "must be a label value (text)" })
    .trim()
    .min(1, "must be a label value, as written in the CSV")
    .max(200, "must be at most 200 characters")
    .nullish()
    .describe(POSITIVE_CLASS_DOC),
  dicom_window: dicomWindowField.nullish(),
  dicom_frames: dicomFramesField.nullish(),
});

type DatasetFields = Pick<
  z.output<typeof experimentRequestFields>,
  "task" | "type_of_experiment" | "model_type" | "label_cols" | "images_col" | "data_cols" | "split_col"
> & { subgroup_cols?: string[] | null };

/** The cross-field rules on the dataset's columns; shared by the experiment request and datasets/validate. */
export function datasetFieldRules(r: DatasetFields, ctx: z.RefinementCtx): void {
  const issue = (field: string, message: string) => ctx.addIssue({ code: "custom", path: [field], message });
  if (r.task === "vision" && !r.images_col) issue("images_col", "is required when task is vision");
  if (r.task === "data" && (!r.data_cols || r.data_cols.length === 0))
    issue("data_cols", "is required (a non-empty list) when task is data");
  if (r.task === "data" && r.type_of_experiment === "detection") issue("type_of_experiment", "detection needs task vision");
  if (r.type_of_experiment === "detection" && r.model_type === 1) issue("model_type", "detection is not a regression");
  if (r.type_of_experiment === "detection" && r.label_cols.length !== 1) issue("label_cols", "detection takes one class column");
  if (r.split_col && r.type_of_experiment === "detection") issue("split_col", "is not supported for detection yet");
  if (r.subgroup_cols?.length) {
    // Subgroup figures are AUC, sensitivity and specificity per group: a classification with one label column.
    if (r.type_of_experiment === "detection") issue("subgroup_cols", "are for classification, not detection");
    else if (r.model_type === 1) issue("subgroup_cols", "are for classification, not regression (model_type 1)");
    else if (r.label_cols.length > 1) issue("subgroup_cols", "are for one label column; several label_cols make a multilabel task");
    for (const c of r.subgroup_cols) {
      if (r.label_cols.includes(c)) issue("subgroup_cols", `'${c}' is a label column; a subgroup column describes the patients`);
      if (c === r.images_col) issue("subgroup_cols", `'${c}' is the image column`);
      if (c === r.split_col) issue("subgroup_cols", `'${c}' is the split column`);
    }
  }
}

// Control characters would break the one-line list and the logs; a description may keep its line breaks and tabs.
const NAME_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DESCRIPTION_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
export const NAME_MAX = 120;
export const DESCRIPTION_MAX = 2000;
export const SEARCH_MAX = 200;

/** Counted in characters as a person counts them (code points), not UTF-16 units. */
const chars = (s: string) => [...s].length;

/** A label the owner writes: trimmed, at most `max` characters, none of `control`; an empty one means "none" (null). */
const labelText = (max: number, control: RegExp, controlMessage: string, description: string) =>
  z
    .string({ error: "must be text" })
    .trim()
    .refine((s) => chars(s) <= max, `must be at most ${max} characters`)
    .refine((s) => !control.test(s), controlMessage)
    .transform((s) => s || null)
    .describe(description);

export const experimentName = labelText(
  NAME_MAX,
  NAME_CONTROL,
  "must not contain control characters (line breaks, tabs and the like)",
  `Your label for the experiment, shown in the list: at most ${NAME_MAX} characters, one line. Editable later (PATCH).`,
);

export const experimentDescription = labelText(
  DESCRIPTION_MAX,
  DESCRIPTION_CONTROL,
  "must not contain control characters other than line breaks and tabs",
  `Free notes on the experiment: at most ${DESCRIPTION_MAX} characters. Editable later (PATCH).`,
);

export const INTENDED_USE_MAX = 2000;
export const experimentIntendedUse = labelText(
  INTENDED_USE_MAX,
  DESCRIPTION_CONTROL,
  "must not contain control characters other than line breaks and tabs",
  `What the model is for, in the team's words (the model card's "intended use": setting, patients, the decision it supports): at most ${INTENDED_USE_MAX} characters.`,
);

/** PATCH /v1/experiments/{experiment_id}: null clears a field, an absent one is left as it is. */
export const experimentLabelsPatchSchema = z
  .object({
    name: experimentName.nullable().optional(),
    description: experimentDescription.nullable().optional(),
    intended_use: experimentIntendedUse.nullable().optional(),
  })
  .strict()
  .refine(
    (p) => p.name !== undefined || p.description !== undefined || p.intended_use !== undefined,
    "must set name, description or intended_use (null clears one)",
  );

export type ExperimentLabels = { name?: string | null; description?: string | null; intended_use?: string | null };

export const experimentRequestSchema = experimentRequestFields
  .extend({ name: experimentName.nullish(), description: experimentDescription.nullish() })
  .strict()
  .superRefine((r, ctx) => {
    datasetFieldRules(r, ctx);
    const issue = (field: string, message: string) => ctx.addIssue({ code: "custom", path: [field], message });
    if (r.study_type === "Retrospective" && r.source_experiment_id === undefined)
      issue("source_experiment_id", "is required for a Retrospective study");
    if (r.study_type === "Retrospective" && r.source_experiment_id === r.experiment_id)
      issue("source_experiment_id", "must name another experiment");
    if (r.study_type === "Builder" && r.source_experiment_id !== undefined)
      issue("source_experiment_id", "is only for Retrospective studies");
    if (r.split_col && r.study_type === "Retrospective")
      issue("split_col", "is only for Builder studies (a Retrospective study tests every row)");
    for (const col of Object.keys(r.subgroup_bins ?? {})) {
      if (!r.subgroup_cols?.includes(col)) issue("subgroup_bins", `'${col}' is not in subgroup_cols`);
    }
    for (const field of ["dicom_window", "dicom_frames"] as const) {
      if (r[field] != null && r.task !== "vision") issue(field, "is for image experiments (task vision): a table has no DICOM images");
    }
    if (r.positive_class != null) {
      if (r.type_of_experiment === "detection") issue("positive_class", "is for binary classification, not detection");
      else if (r.model_type === 1) issue("positive_class", "is for binary classification, not regression (model_type 1)");
      else if (r.label_cols.length > 1)
        issue("positive_class", "is for one label column with two values; several label_cols make a multilabel task");
    }
  });

export type ExperimentRequestInput = z.input<typeof experimentRequestSchema>;
/** The request as stored: never holds user_token; name and description live in their own columns. */
export type ExperimentRequest = Omit<z.output<typeof experimentRequestSchema>, "user_token" | "name" | "description">;

/**
 * The request to store and hash, and the labels apart. Name and description are left out of the request hash on
 * purpose: they are labels the owner may edit later (PATCH), not part of what is trained. So a retried identical
 * POST is still answered with the same experiment (200), and so is a retry whose label was changed in between;
 * that answer carries the stored labels (a re-post never overwrites them: PATCH does that).
 */
export function splitRequest(r: z.output<typeof experimentRequestSchema>): { request: ExperimentRequest; labels: ExperimentLabels } {
  const { user_token: _dropped, name, description, ...request } = r;
  return { request, labels: { name: name ?? null, description: description ?? null } };
}

/** The request as stored (see splitRequest). */
export function withoutToken(r: z.output<typeof experimentRequestSchema>): ExperimentRequest {
  return splitRequest(r).request;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined && v !== null)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** Same normalised request (key order, nulls, defaults, study_type case) => same hash: the idempotency key. */
export function requestHash(r: ExperimentRequest): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(r)))
    .digest("hex");
}

/** zip_gcloud may be `gs://<bucket>/<path>` (`s3://<bucket>/<path>`) or the bare object path. */
export function zipObjectPath(zipGcloud: string): string {
  return withoutBucketUri(zipGcloud);
}
