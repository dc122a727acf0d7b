import { z } from "zod";
import { ruleError, ruleIssue } from "../i18n/rule-text.js";

// POST /v1/experiments' fields and rules that need nothing but zod, so the dashboard's New experiment form
// (web/src/lib/experiment-form.ts) validates with the very rules the server applies: src/experiments/request.ts
// builds the request schema from these, adding what needs the server (the bucket path check, the DICOM presets).
// Keep this file free of Node imports: Vite bundles it into the dashboard.
//
// Every message is a key of the errors catalog (validation.request.*) named through src/i18n/rule-text.ts, which
// needs no Node: the server words it in the caller's language at the edge, the dashboard in the page's. Cross-field
// rules also report params.rule (and params.column where one is named), a stable id the dashboard turns into a
// sentence of its own catalog (experiments: new.rules.*).

export const nonEmptyName = z.string().trim().min(1, ruleError("validation.request.column_name"));

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

/**
 * The seed's fields, one rule each. zip_gcloud is only checked to be present here; request.ts replaces it with the
 * bucket path check and adds dicom_window and dicom_frames.
 */
export const experimentRequestShape = {
  zip_gcloud: z.string().min(1, ruleError("validation.bucket_path_of_zip")),
  label_cols: z.array(nonEmptyName).min(1, ruleError("validation.request.one_label")),
  images_col: nonEmptyName.nullish(),
  data_cols: z.array(nonEmptyName).nullish(),
  split_col: nonEmptyName.nullish().describe(SPLIT_COL_DOC),
  subgroup_cols: z
    .array(nonEmptyName)
    .max(10, ruleError("validation.request.at_most_subgroups", { max: 10 }))
    .refine((cols) => new Set(cols).size === cols.length, ruleError("validation.request.no_column_twice"))
    .nullish()
    .describe(SUBGROUP_COLS_DOC),
  subgroup_bins: z
    .record(
      z.string(),
      z
        .array(z.number(ruleError("validation.request.cut_points_numbers")).finite(), ruleError("validation.request.cut_points_list"))
        .min(1, ruleError("validation.request.cut_points_min"))
        .max(20, ruleError("validation.request.cut_points_max", { max: 20 })),
    )
    .nullish()
    .describe(SUBGROUP_BINS_DOC),
  model_type: z.union([z.literal(0), z.literal(1)], ruleError("validation.request.model_type")),
  optimization_type: z.union([z.literal(0), z.literal(1)], ruleError("validation.request.optimization_type")),
  experiment_id: z
    .number(ruleError("validation.request.positive_integer"))
    .int(ruleError("validation.request.positive_integer"))
    .positive(ruleError("validation.request.positive_integer"))
    .max(2_147_483_647),
  user_token: z.string().optional(),
  user_id: z.string().min(1, ruleError("validation.request.user_id")),
  study_type: z
    .string(ruleError("validation.request.study_type"))
    .transform((s) => (s.toLowerCase() === "builder" ? "Builder" : s))
    .pipe(z.enum(["Builder", "Retrospective"], ruleError("validation.request.study_type"))),
  type_of_experiment: z.enum(["classification", "detection"], ruleError("validation.request.type_of_experiment")).default("classification"),
  task: z.enum(["vision", "data"], ruleError("validation.request.task")),
  optimization_metric: z
    .enum(["AUC", "F-macro", "Precision", "Recall"], ruleError("validation.request.optimization_metric"))
    .describe(OPTIMIZATION_METRIC_DOC),
  time_budget_s: z
    .number()
    .positive(ruleError("validation.request.positive_seconds"))
    .max(7 * 24 * 3600)
    .optional(),
  callback_url: z.url({ protocol: /^https?$/, ...ruleError("validation.request.http_url") }).optional(),
  source_experiment_id: z.number().int().positive(ruleError("validation.request.positive_integer")).optional(),
  positive_class: z
    .string(ruleError("validation.request.label_value_text"))
    .trim()
    .min(1, ruleError("validation.request.label_value"))
    .max(200, ruleError("validation.at_most_chars", { max: 200 }))
    .nullish()
    .describe(POSITIVE_CLASS_DOC),
};

// Control characters would break the one-line list and the logs; a description may keep its line breaks and tabs.
const NAME_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const DESCRIPTION_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
export const NAME_MAX = 120;
export const DESCRIPTION_MAX = 2000;
export const SEARCH_MAX = 200;

/** Counted in characters as a person counts them (code points), not UTF-16 units. */
const chars = (s: string) => [...s].length;

/** A label the owner writes: trimmed, at most `max` characters, none of `control`; an empty one means "none" (null). */
const labelText = (max: number, control: RegExp, controlMessage: ReturnType<typeof ruleError>, description: string) =>
  z
    .string(ruleError("validation.request.text"))
    .trim()
    .refine((s) => chars(s) <= max, ruleError("validation.at_most_chars", { max }))
    .refine((s) => !control.test(s), controlMessage)
    .transform((s) => s || null)
    .describe(description);

export const experimentName = labelText(
  NAME_MAX,
  NAME_CONTROL,
  ruleError("validation.request.no_control"),
  `Your label for the experiment, shown in the list: at most ${NAME_MAX} characters, one line. Editable later (PATCH).`,
);

export const experimentDescription = labelText(
  DESCRIPTION_MAX,
  DESCRIPTION_CONTROL,
  ruleError("validation.request.no_control_but_breaks"),
  `Free notes on the experiment: at most ${DESCRIPTION_MAX} characters. Editable later (PATCH).`,
);

export const INTENDED_USE_MAX = 2000;
export const experimentIntendedUse = labelText(
  INTENDED_USE_MAX,
  DESCRIPTION_CONTROL,
  ruleError("validation.request.no_control_but_breaks"),
  `What the model is for, in the team's words (the model card's "intended use": setting, patients, the decision it supports): at most ${INTENDED_USE_MAX} characters.`,
);

/** The request as the rules read it: the parsed fields (the DICOM ones only for being set or not). */
export interface RequestForRules {
  task: "vision" | "data";
  type_of_experiment: "classification" | "detection";
  model_type: 0 | 1;
  label_cols: string[];
  images_col?: string | null;
  data_cols?: string[] | null;
  split_col?: string | null;
  subgroup_cols?: string[] | null;
}

type Words = ReturnType<typeof ruleIssue>;

/** Adds one issue on `field`: its words (params.text, for the edge), its rule id and column for the dashboard's sentence. */
function issueOn(ctx: z.RefinementCtx, field: string, rule: string, words: Words, column?: string): void {
  const params = column === undefined ? { rule, text: words.text } : { rule, column, text: words.text };
  ctx.addIssue({ code: "custom", path: [field], message: words.message, params });
}

/**
 * One column, one role: a label is not also an input, the image path or the split, and so on. The dataset check
 * (src/datasets/table-checks.ts, error column_role_conflict) says the same of the CSV; here the request is refused
 * before anything is queued, and the dashboard refuses it before it is sent.
 */
export function columnRoleRules(r: RequestForRules, ctx: z.RefinementCtx): void {
  const data = r.task === "data" ? (r.data_cols ?? []) : [];
  const images = r.task === "vision" ? r.images_col : null;
  for (const c of r.label_cols) {
    if (data.includes(c)) issueOn(ctx, "data_cols", "label_is_data", ruleIssue("validation.request.label_is_data", { column: c }), c);
    if (c === images) issueOn(ctx, "label_cols", "label_is_images", ruleIssue("validation.request.label_is_images", { column: c }), c);
    if (c === r.split_col) issueOn(ctx, "split_col", "split_is_label", ruleIssue("validation.request.split_is_label", { column: c }), c);
  }
  for (const c of data) {
    if (c === images) issueOn(ctx, "data_cols", "data_is_images", ruleIssue("validation.request.data_is_images", { column: c }), c);
    if (c === r.split_col) issueOn(ctx, "split_col", "split_is_data", ruleIssue("validation.request.split_is_data", { column: c }), c);
  }
  if (images && images === r.split_col)
    issueOn(ctx, "split_col", "split_is_images", ruleIssue("validation.request.split_is_images", { column: images }), images);
}

/** The cross-field rules on the dataset's columns; shared by the experiment request and datasets/validate. */
export function datasetFieldRules(r: RequestForRules, ctx: z.RefinementCtx): void {
  const issue = (field: string, rule: string, words: Words, column?: string) => issueOn(ctx, field, rule, words, column);
  if (r.task === "vision" && !r.images_col) issue("images_col", "images_required", ruleIssue("validation.request.images_required"));
  if (r.task === "data" && (!r.data_cols || r.data_cols.length === 0))
    issue("data_cols", "data_required", ruleIssue("validation.request.data_required"));
  if (r.task === "data" && r.type_of_experiment === "detection")
    issue("type_of_experiment", "detection_needs_vision", ruleIssue("validation.request.detection_needs_vision"));
  if (r.type_of_experiment === "detection" && r.model_type === 1)
    issue("model_type", "detection_not_regression", ruleIssue("validation.request.detection_not_regression"));
  if (r.type_of_experiment === "detection" && r.label_cols.length !== 1)
    issue("label_cols", "detection_one_label", ruleIssue("validation.request.detection_one_label"));
  if (r.split_col && r.type_of_experiment === "detection")
    issue("split_col", "split_not_detection", ruleIssue("validation.request.split_not_detection"));
  columnRoleRules(r, ctx);
  if (r.subgroup_cols?.length) {
    // Subgroup figures are AUC, sensitivity and specificity per group: a classification with one label column.
    if (r.type_of_experiment === "detection")
      issue("subgroup_cols", "subgroups_classification", ruleIssue("validation.request.subgroups_not_detection"));
    else if (r.model_type === 1)
      issue("subgroup_cols", "subgroups_classification", ruleIssue("validation.request.subgroups_not_regression"));
    else if (r.label_cols.length > 1) issue("subgroup_cols", "subgroups_one_label", ruleIssue("validation.request.subgroups_one_label"));
    for (const c of r.subgroup_cols) {
      if (r.label_cols.includes(c))
        issue("subgroup_cols", "subgroup_is_label", ruleIssue("validation.request.subgroup_is_label", { column: c }), c);
      if (c === r.images_col)
        issue("subgroup_cols", "subgroup_is_images", ruleIssue("validation.request.subgroup_is_images", { column: c }), c);
      if (c === r.split_col)
        issue("subgroup_cols", "subgroup_is_split", ruleIssue("validation.request.subgroup_is_split", { column: c }), c);
    }
  }
}

/** The whole request as the rules read it (the parsed output of the request schema). */
export interface ExperimentRequestForRules extends RequestForRules {
  study_type: "Builder" | "Retrospective";
  experiment_id: number;
  source_experiment_id?: number;
  subgroup_bins?: Record<string, number[]> | null;
  positive_class?: string | null;
  dicom_window?: unknown;
  dicom_frames?: unknown;
}

/** Every cross-field rule of POST /v1/experiments. */
export function experimentRequestRules(r: ExperimentRequestForRules, ctx: z.RefinementCtx): void {
  datasetFieldRules(r, ctx);
  const issue = (field: string, rule: string, words: Words, column?: string) => issueOn(ctx, field, rule, words, column);
  if (r.study_type === "Retrospective" && r.source_experiment_id === undefined)
    issue("source_experiment_id", "source_required", ruleIssue("validation.request.source_required"));
  if (r.study_type === "Retrospective" && r.source_experiment_id === r.experiment_id)
    issue("source_experiment_id", "source_is_self", ruleIssue("validation.request.source_is_self"));
  if (r.study_type === "Builder" && r.source_experiment_id !== undefined)
    issue("source_experiment_id", "source_only_retrospective", ruleIssue("validation.request.source_only_retrospective"));
  if (r.split_col && r.study_type === "Retrospective")
    issue("split_col", "split_only_builder", ruleIssue("validation.request.split_only_builder"));
  for (const col of Object.keys(r.subgroup_bins ?? {})) {
    if (!r.subgroup_cols?.includes(col))
      issue("subgroup_bins", "bins_not_subgroup", ruleIssue("validation.request.bins_not_subgroup", { column: col }), col);
  }
  for (const field of ["dicom_window", "dicom_frames"] as const) {
    if (r[field] != null && r.task !== "vision") issue(field, "dicom_for_images", ruleIssue("validation.request.dicom_for_images"));
  }
  if (r.positive_class != null) {
    if (r.type_of_experiment === "detection")
      issue("positive_class", "positive_binary_only", ruleIssue("validation.request.positive_not_detection"));
    else if (r.model_type === 1) issue("positive_class", "positive_binary_only", ruleIssue("validation.request.positive_not_regression"));
    else if (r.label_cols.length > 1) issue("positive_class", "positive_one_label", ruleIssue("validation.request.positive_one_label"));
  }
}

/**
 * What the dashboard checks before it sends POST /v1/experiments: every field and rule above; only the bucket path
 * and the DICOM fields (which the form does not send) are left to the server.
 */
export const experimentRequestCheck = z
  .object({ ...experimentRequestShape, name: experimentName.nullish(), description: experimentDescription.nullish() })
  .strict()
  .superRefine(experimentRequestRules);

/** The fields POST /v1/datasets/validate takes: the request's own, picked (model_type defaults to 0 there). */
export const validateRequestShape = {
  zip_gcloud: experimentRequestShape.zip_gcloud,
  task: experimentRequestShape.task,
  label_cols: experimentRequestShape.label_cols,
  images_col: experimentRequestShape.images_col,
  data_cols: experimentRequestShape.data_cols,
  split_col: experimentRequestShape.split_col,
  subgroup_cols: experimentRequestShape.subgroup_cols,
  type_of_experiment: experimentRequestShape.type_of_experiment,
  model_type: experimentRequestShape.model_type.default(0),
};

/** What the dashboard checks before it sends POST /v1/datasets/validate. */
export const validateRequestCheck = z.object(validateRequestShape).strict().superRefine(datasetFieldRules);
