import { z } from "zod";
import { STATUSES } from "../experiments/state.js";

// Response bodies of the experiment, model and prediction routes, as zod schemas: they document those routes in
// /openapi.json, and the dashboard's TypeScript types are generated from that document (scripts/web-api-types.ts).
// They describe what src/experiments/view.ts, src/http/routes/models.ts and src/serving/predict.ts return.

const num = z.number().nullable();
const interval = z.object({ value: num, ci_low: num, ci_high: num });
export const metricValueSchema = interval.extend({ per_class: z.record(z.string(), interval).optional() });
export const metricsSchema = z
  .record(z.string(), metricValueSchema)
  .describe(
    "by metric name (auc, f_macro, precision, recall, accuracy, ece, mae, rmse, r2, map50, map50_95, sensitivity, specificity, ppv, npv, prevalence): value with its 95% interval. " +
      "f_macro, precision and recall are macro averages over classes. sensitivity, specificity, ppv, npv and prevalence: binary, the positive class's (positive_class); multiclass and multilabel, a macro average of one-vs-rest values, each class's under per_class (keyed by class index).",
  );

export const positiveClassSchema = z
  .object({
    index: z.number(),
    code: z.string().describe("the label value as written in the CSV"),
    name: z.string(),
    rule: z.string().describe("requested, or the rule that chose it"),
  })
  .describe("binary classification: the class whose sensitivity, specificity, PPV and NPV are reported");

export const confusionMatrixSchema = z
  .object({
    labels: z.array(z.string()).describe("class names, in the order of the rows and columns"),
    counts: z.array(z.array(z.number())).optional().describe("test rows: counts[true class][predicted class]"),
    per_label: z
      .record(z.string(), z.array(z.array(z.number())))
      .optional()
      .describe("multilabel: per label [[true negative, false positive], [false negative, true positive]]"),
  })
  .describe("the test set's confusion matrix at the model's thresholds");

export const subgroupsSchema = z
  .array(
    z.object({
      column: z.string().describe("a column of subgroup_cols"),
      kind: z
        .enum(["categorical", "quartiles", "bins"])
        .describe("categories; quartiles of the test patients; the request's subgroup_bins"),
      skipped: z.string().optional().describe("why the column was not grouped (it looks like free text or an identifier)"),
      groups: z.array(
        z.object({
          label: z.string().describe("the category, 'other' (rare values pooled), 'missing', or a numeric range such as 21–24"),
          patients: z.number().describe("distinct test patients in the group"),
          positives: z.number().nullable().describe("binary: of them, patients with the positive class; null for multiclass"),
          prevalence: z.number().nullable(),
          auc: interval.nullable().describe("binary AUC; multiclass macro one-vs-rest; null when too_small"),
          sensitivity: interval.nullable().describe("at the model's thresholds (multiclass: macro); null when too_small"),
          specificity: interval.nullable().describe("at the model's thresholds (multiclass: macro); null when too_small"),
          rest_auc: z.number().nullable().optional().describe("the AUC of every other test patient, what the flag compares with"),
          flag: z
            .enum(["worse", "too_small"])
            .nullable()
            .describe(
              "worse: the group's AUC interval lies wholly below rest_auc; too_small: under 20 patients or under 5 of a class, no figures",
            ),
        }),
      ),
    }),
  )
  .describe("test performance per group of each column in the request's subgroup_cols (docs/metrics.md, Subgroups)");

export const resultWarningSchema = z.object({
  code: z.enum([
    "no_better_than_chance",
    "test_set_too_small",
    "overfitting",
    "poor_calibration",
    "class_imbalance",
    "perfect_score_check_leakage",
    "subgroup_worse",
    "internal_test_only",
  ]),
  severity: z.enum(["severe", "caution", "info"]).describe("severe: do not rely on the model as it is"),
  title: z.string().describe("a few words, for a badge"),
  message: z.string().describe("what was seen and what it means, in plain words"),
});

export const problemSchema = z.object({
  severity: z.enum(["error", "warning"]),
  code: z.string(),
  message: z.string(),
  row: z.number().optional().describe("spreadsheet row: the header is row 1"),
  column: z.string().optional(),
  path: z.string().optional().describe("path inside the zip"),
  key: z
    .string()
    .optional()
    .describe(
      "the message's catalog key (namespace:key, locales/<lng>/): message is said from it in the Accept-Language; absent in reports stored before keys",
    ),
  params: z
    .record(z.string(), z.union([z.string(), z.number()]))
    .optional()
    .describe("the values the key's message names (row, column, value, ...)"),
});

const range = z.object({ min: z.number(), max: z.number() });
export const datasetSummarySchema = z.looseObject({
  format: z.enum(["csv", "voc", "coco"]).optional(),
  csv_path: z.string().optional(),
  rows: z.number().optional(),
  patients: z.number().optional(),
  images: z.number().optional(),
  images_per_patient: range.extend({ mean: z.number() }).optional(),
  class_counts: z
    .record(z.string(), z.record(z.string(), z.number()))
    .optional()
    .describe("per label column: class value -> rows (boxes for detection)"),
  image_sizes: z.object({ width: range, height: range, channels: z.record(z.string(), z.number()) }).optional(),
  features: z
    .array(
      z.object({
        name: z.string(),
        type: z.enum(["numeric", "categorical"]),
        min: z.number().optional(),
        max: z.number().optional(),
        categories: z.number().optional(),
        missing: z.number(),
      }),
    )
    .optional(),
  label_range: range.optional(),
  boxes: z.number().optional(),
  split: z.object({ train: z.number(), val: z.number(), test: z.number(), from_column: z.string().optional() }).optional(),
  unreferenced_images: z.number().optional(),
  images_without_objects: z.number().optional(),
  problem_counts: z.record(z.string(), z.number()).optional(),
  dicom: z
    .object({
      files: z.number(),
      modalities: z.record(z.string(), z.number()),
      manufacturers: z.record(z.string(), z.number()),
      transfer_syntaxes: z.record(z.string(), z.number()).describe("'<name> (<UID>)' -> files"),
      bits_stored: z.record(z.string(), z.number()),
      photometric: z.record(z.string(), z.number()),
      pixel_spacing_mm: range.extend({ files: z.number() }).nullable().describe("row spacing over the files that state one"),
      frames: range.extend({ multi_frame_files: z.number() }),
      identifying_headers: z.record(z.string(), z.number()).describe("identifying tag -> files that fill it (never a value)"),
      burned_in_annotation: z.number(),
    })
    .optional()
    .describe("the DICOM files among the images (docs/datasets.md#dicom)"),
  samples: z
    .record(z.string(), z.record(z.string(), z.array(z.object({ path: z.string(), row: z.number(), data: z.string() }))))
    .optional()
    .describe("validate only, vision classification: label column -> class -> up to 3 thumbnails (data: URIs)"),
});

export const datasetReportSchema = z.object({
  valid: z.boolean(),
  errors: z.array(problemSchema),
  warnings: z.array(problemSchema),
  errors_omitted: z.number(),
  warnings_omitted: z.number(),
  summary: datasetSummarySchema,
});

const progressSchema = z.object({
  fraction: z.number().describe("of the whole experiment, 0..1"),
  stage: z.string(),
  message: z.string().optional().describe("what is being done, in the Accept-Language when key is set (else the pipeline's English)"),
  key: z
    .string()
    .optional()
    .describe(
      "what is being done, as a catalog key: progress:pipeline.<key> in locales/<lng>/progress.json (pipelines/contract/progress-messages.json)",
    ),
  params: z
    .record(z.string(), z.union([z.string(), z.number()]))
    .optional()
    .describe("the values the key's words name"),
  epoch: z.number().optional(),
  epochs: z.number().optional(),
  trial: z.number().optional(),
  trials: z.number().optional(),
  best_metric: z.number().nullable().optional(),
  eta_s: z.number().nullable().optional(),
  updated_at: z.string(),
});

const status = z.enum(STATUSES);
const time = z.union([z.string(), z.date()]).describe("ISO 8601");
const name = z.string().nullable().describe("your label for the experiment; null when it has none");
const description = z.string().nullable().describe("your notes on the experiment; null when it has none");

const figure = z.number().nullable();
const counts = z.object({ tp: z.number(), fp: z.number(), tn: z.number(), fn: z.number() });
const opFigures = {
  sensitivity: figure,
  specificity: figure,
  ppv: figure,
  npv: figure,
  accuracy: figure,
  f_macro: figure,
  precision: figure,
  recall: figure,
};
export const operatingPointRecordSchema = z
  .object({
    rule: z.enum(["sensitivity", "specificity", "youden", "f1", "threshold"]),
    target: z.number().nullable(),
    threshold: z.number().describe("on the positive class's probability: a patient at or above it is flagged"),
    positive_class: z.string(),
    validation: z
      .object({ source: z.string(), ...opFigures, counts, n: z.number() })
      .describe("where the threshold was chosen: the validation split, or out-of-fold predictions"),
    test: z
      .object({
        sensitivity: interval,
        specificity: interval,
        ppv: interval,
        npv: interval,
        accuracy: interval,
        f_macro: interval,
        precision: interval,
        recall: interval,
        counts,
        n: z.number(),
      })
      .describe("the test set at that threshold, with 95% intervals from 1000 resamples of patients"),
    from_version: z.number(),
    created_at: z.string(),
    created_by: z.string(),
  })
  .describe("how this version's threshold was chosen (saved operating point); null for a version the pipeline made");

export const modelVersionSchema = z.object({
  version: z.number(),
  current: z.boolean().describe("the version /predict answers with"),
  created_at: time,
  made_current_at: time,
  thresholds: z.array(z.number()).nullable(),
  threshold_rule: z.string().nullable(),
  operating_point: operatingPointRecordSchema.nullable(),
  approval: z
    .object({
      approved_by: z.string().nullable().describe("the approver's e-mail; null when their account was erased (former_member)"),
      former_member: z.boolean(),
      approved_at: time,
      intended_use: z.string().nullable(),
    })
    .nullable()
    .describe("who approved this version for use, when and for what (issue 50: a second pair of eyes); null: not approved"),
  test: z.object({ sensitivity: z.unknown(), specificity: z.unknown(), ppv: z.unknown(), npv: z.unknown() }),
});

export const modelVersionsSchema = z.object({
  experiment_id: z.number(),
  current_version: z.number(),
  data: z.array(modelVersionSchema).describe("newest first"),
});

export const operatingPointExplorerSchema = z.object({
  experiment_id: z.number(),
  version: z.number(),
  kind: z.string(),
  problem: z.string(),
  available: z.boolean().describe("false: no operating point to move (not binary, or built before operating points: rebuild)"),
  message: z.string().optional(),
  positive_class: z.object({ index: z.number(), name: z.string() }).nullable().optional(),
  validation_source: z.string().optional(),
  validation_counts: z.object({ positive: z.number(), negative: z.number() }).optional(),
  current: z
    .object({
      threshold: z.number().nullable(),
      rule: z.string().nullable(),
      target: z.number().nullable(),
      threshold_rule: z.string().nullable(),
      validation: z.object({ ...opFigures, counts, n: z.number() }).nullable(),
    })
    .optional(),
  curve: z
    .array(z.object({ threshold: z.number(), tp: z.number(), fp: z.number(), tn: z.number(), fn: z.number() }))
    .optional()
    .describe("validation counts at every cut, highest threshold first (never the test set's)"),
});

export const experimentSchema = z.object({
  experiment_id: z.number(),
  name,
  description,
  intended_use: z
    .string()
    .nullable()
    .optional()
    .describe("the team's words on what the model is for (PATCH intended_use); shown first on the model card"),
  user_id: z.string().nullable().describe("who built it; null when their account was erased (a former member)"),
  built_by: z
    .string()
    .nullable()
    .describe('the builder\'s e-mail; null when their account was erased: the dashboard says "a former member"'),
  status,
  progress: progressSchema.nullable(),
  history: z.array(
    z.object({
      status,
      at: z.string(),
      attempt: z.number().optional(),
      event: z
        .enum(["operating_point_saved", "model_version_restored", "input_check_mode_changed"])
        .optional()
        .describe(
          "a model version change (the status is unchanged): an operating point saved as a new version, or a version made current again",
        ),
      version: z.number().optional().describe("with event: the model version it made current"),
    }),
  ),
  request: z.record(z.string(), z.unknown()).describe("the request as accepted (user_token removed)"),
  study: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("how Builder read the request: kind, family, metric, threshold_metric, budget"),
  dataset_report: datasetReportSchema.nullable(),
  metrics: metricsSchema.nullable().describe("test-set metrics once ready"),
  positive_class: positiveClassSchema.nullable().optional(),
  confusion_matrix: confusionMatrixSchema.nullable().optional(),
  subgroups: subgroupsSchema
    .nullable()
    .optional()
    .describe(
      "test performance per group of each column in the request's subgroup_cols (docs/metrics.md, Subgroups); null when none was asked for, or for regression and detection",
    ),
  warnings: z
    .array(resultWarningSchema)
    .optional()
    .describe("what limits trust in the result (docs/metrics.md, Warnings); empty when none or before a model exists"),
  original_metrics: metricsSchema.nullable().optional().describe("Retrospective: the source model's own test metrics"),
  source_experiment_id: z.number().optional(),
  retrospective_studies: z
    .array(
      z.object({
        experiment_id: z.number(),
        name: z.string().nullable(),
        finished_at: time.nullable(),
        patients: z.number().nullable().describe("patients tested (every patient of a Retrospective study is a test patient)"),
        figure: z
          .object({ name: z.string(), value: z.number().nullable(), ci_low: z.number().nullable(), ci_high: z.number().nullable() })
          .nullable()
          .describe("the study's headline test figure: AUC where it has one (else mAP@0.5, RMSE or macro F1), with its 95% interval"),
      }),
    )
    .optional()
    .describe(
      "Builder studies: the ready Retrospective studies of this model on other data (oldest first, at most 20), shown beside the internal test figures",
    ),
  failure_reason: z.string().nullable().describe("why it failed or was refused, in the Accept-Language"),
  failure_code: z
    .string()
    .nullable()
    .describe("the reason's catalog code (build.timeout, pipeline.image_unreadable, ...); null when none or stored before codes"),
  cancel_requested: z.boolean(),
  attempts: z.number(),
  model: z
    .object({
      version: z.number().describe("the version /predict uses (the one made current last)"),
      kind: z.string(),
      store_path: z.string(),
      published_at: time,
      operating_point: operatingPointRecordSchema.nullable().optional(),
    })
    .nullable(),
  created_at: time,
  updated_at: time,
  finished_at: time.nullable(),
});

export const experimentListSchema = z.object({
  data: z.array(
    z.object({
      experiment_id: z.number(),
      name,
      description,
      status,
      progress: progressSchema.nullable(),
      study_type: z.string(),
      task: z.string(),
      type_of_experiment: z.string(),
      failure_reason: z.string().nullable(),
      built_by: z
        .string()
        .nullable()
        .describe('the builder\'s e-mail; null when their account was erased: the dashboard says "a former member"'),
      failure_code: z.string().nullable(),
      created_at: time,
      finished_at: time.nullable(),
    }),
  ),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
  has_more: z.boolean(),
});

export const modelSchema = z.object({
  experiment_id: z.number(),
  name: name.describe("the experiment's name (see PATCH /v1/experiments/{experiment_id})"),
  description: description.describe("the experiment's description"),
  version: z.number(),
  kind: z.enum(["vision_classification", "detection", "tabular"]),
  problem: z.enum(["binary", "multiclass", "multilabel", "regression", "detection"]),
  created_at: time,
  inputs: z.object({
    name: z.string(),
    image: z.looseObject({ width: z.number(), height: z.number(), channels: z.number() }).optional(),
    data_cols: z.array(z.string()).optional(),
    columns: z
      .array(
        z.object({
          name: z.string(),
          type: z.enum(["numeric", "categorical"]),
          categories: z
            .number()
            .int()
            .optional()
            .describe("categorical: how many values the model knows (never the values: they may identify patients)"),
          min: z.number().optional(),
          max: z.number().optional(),
          missing: z
            .boolean()
            .optional()
            .describe("numeric: the training data had missing values (NA, ?) here; send null for an unknown value"),
        }),
      )
      .optional(),
    message: z.string().optional(),
  }),
  classes: z.record(z.string(), z.string()).describe("class index -> name"),
  thresholds: z.array(z.number()).nullable(),
  threshold_rule: z.string().nullable(),
  metric: z.string().nullable(),
  metrics: z.object({ test: metricsSchema, validation: metricsSchema.optional() }),
  detection: z
    .object({ score_threshold: z.number(), nms_iou: z.number(), max_detections: z.number(), class_agnostic_nms: z.boolean().optional() })
    .optional(),
  outputs: z.record(z.string(), z.string()),
});

export const predictionSchema = z.object({
  error: z.literal(0),
  classes: z.record(z.string(), z.string()),
  score: z.array(z.number()),
  prediccion: z.array(z.number()).optional().describe("classification: 0/1 per class; regression: [value]"),
  columnas: z.number().optional().describe("vision: Grad-CAM map width"),
  filas: z.number().optional().describe("vision: Grad-CAM map height"),
  gradients: z
    .record(z.string(), z.array(z.array(z.number())))
    .optional()
    .describe("vision: class index -> filas x columnas values 0..255, for each predicted class"),
  boxes: z.array(z.array(z.number())).optional().describe("detection: [x1, y1, x2, y2] in the image's pixels"),
  classification: z.array(z.number()).optional().describe("detection: class index of each box"),
});

export const experimentDeletionSchema = z.object({
  experiment_id: z.number(),
  status: z.literal("deleting"),
  message: z.string(),
});

/** DELETE /v1/me: the account's erasure has begun (it goes on in the background, and after a restart). */
export const accountErasureSchema = z.object({
  user_id: z.string(),
  status: z.literal("erasing"),
  experiments: z.number().describe("how many experiments are being deleted with it"),
  message: z.string(),
});

/** DELETE of an uploaded file or folder. */
export const fileDeletionSchema = z.object({
  deleted: z.array(z.string()).describe("the object paths removed"),
  cancelled_experiments: z.array(z.number()).describe("with force=true: the running experiments that used them, cancelled"),
});

/** An account as the administrators' Settings → Users lists it (GET /v1/admin/users). */
export const managedUserSchema = z.object({
  id: z.string().uuid(),
  email: z.string(),
  role: z.enum(["admin", "member"]),
  status: z.enum(["active", "disabled", "erasing"]).describe("disabled: no sign-in, no session, no API key works"),
  created_at: z.string(),
  disabled_at: z.string().nullable(),
});

/** A pending invitation (never its token: that is shown once, when it is made). */
export const invitationSchema = z.object({
  id: z.string().uuid(),
  email: z.string().nullable().describe("the administrator's note of whom it is for; the form is pre-filled with it"),
  role: z.enum(["admin", "member"]),
  created_at: z.string(),
  expires_at: z.string(),
  created_by: z.string().uuid().nullable().describe("the administrator who made it; null once that account is erased"),
});

/** A one-time link, shown in this response only; the administrator passes it on (Builder sends no email). */
export const issuedLinkSchema = z.object({
  token: z.string().describe("the secret; only its SHA-256 is stored"),
  path: z.string().describe("the dashboard page that uses it, e.g. /invite#<token>: put the server's address before it"),
  url: z.string().nullable().describe("the whole link when PUBLIC_URL is set, else null"),
  expires_at: z.string(),
});
