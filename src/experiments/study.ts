import { z } from "zod";
import type { Config } from "../config.js";
import type { PipelineKind, SelectionMetric, ThresholdMetric } from "../contract/types.js";
import type { DatasetTask, ProblemFamily } from "../datasets/types.js";
import { dicomOptions, dicomStudySchema } from "./dicom-options.js";
import { zipObjectPath, type ExperimentRequest } from "./request.js";

// The one translation of the seed's wire values (task + type_of_experiment, model_type, optimization_type,
// optimization_metric, time_budget_s) into what Builder runs. It is made once, when the request is accepted,
// stored beside the request (experiments.study), and parsed again by the job: the datasets stage and the job spec
// read only this, never the raw request.

const THRESHOLD_METRICS = ["auc", "f_macro", "precision", "recall"] as const;
const METRIC_BY_NAME: Record<ExperimentRequest["optimization_metric"], ThresholdMetric> = {
  AUC: "auc",
  "F-macro": "f_macro",
  Precision: "precision",
  Recall: "recall",
};

export const studySchema = z
  .object({
    /** train a new model (Builder) or evaluate a published one on new data (Retrospective). */
    command: z.enum(["train", "evaluate"]),
    kind: z.enum(["vision_classification", "detection", "tabular"]),
    family: z.enum(["classification", "regression", "detection"]),
    /** What models are selected on: the requested metric (classification), rmse (regression), map50 (detection). */
    metric: z.enum([...THRESHOLD_METRICS, "rmse", "map50"]),
    /** What decision thresholds are chosen for (detection: the box score threshold); null for regression. */
    threshold_metric: z.enum(THRESHOLD_METRICS).nullable(),
    budget: z.object({ mode: z.enum(["best", "fast"]), time_budget_s: z.number().positive() }),
    /** Bucket object path of the zip (zip_gcloud without gs://bucket/). */
    zip_path: z.string().min(1),
    dataset: z.object({
      family: z.enum(["classification", "regression", "detection"]),
      inputs: z.enum(["images", "table"]),
      label_cols: z.array(z.string()).min(1),
      images_col: z.string().nullable(),
      data_cols: z.array(z.string()),
      split_col: z.string().nullable(),
      /** Columns the test performance is reported by (classification); absent in studies stored before it existed. */
      subgroup_cols: z.array(z.string()).default([]),
    }),
    /** Per subgroup column, cut points instead of quartiles. */
    subgroup_bins: z.record(z.string(), z.array(z.number())).default({}),
    source_experiment_id: z.number().int().positive().nullable(),
    /** Binary classification: the label value reported as positive; null: the pipeline's rule (the rarer class). */
    positive_class: z.string().nullable().default(null),
    /** Image experiments that set dicom_window or dicom_frames: the spec's options.dicom (a preset with its values); null: the defaults. */
    dicom: dicomStudySchema.nullable().default(null),
  })
  .strict();

export type Study = z.output<typeof studySchema>;

type DatasetFields = Pick<
  ExperimentRequest,
  "task" | "type_of_experiment" | "model_type" | "label_cols" | "images_col" | "data_cols" | "split_col"
> & { subgroup_cols?: string[] | null };

export function problemFamily(r: Pick<ExperimentRequest, "type_of_experiment" | "model_type">): ProblemFamily {
  if (r.type_of_experiment === "detection") return "detection";
  return r.model_type === 1 ? "regression" : "classification";
}

export function pipelineKind(r: Pick<ExperimentRequest, "task" | "type_of_experiment">): PipelineKind {
  if (r.task === "data") return "tabular";
  return r.type_of_experiment === "detection" ? "detection" : "vision_classification";
}

/** What the datasets area checks: also used alone by POST /v1/datasets/validate. */
export function datasetTask(r: DatasetFields): DatasetTask & { subgroup_cols: string[] } {
  return {
    family: problemFamily(r),
    inputs: r.task === "vision" ? "images" : "table",
    label_cols: r.label_cols,
    images_col: r.task === "vision" ? (r.images_col ?? null) : null,
    data_cols: r.task === "data" ? (r.data_cols ?? []) : [],
    split_col: r.split_col ?? null,
    subgroup_cols: r.subgroup_cols ?? [],
  };
}

/** optimization_metric per problem family; the README ("Experiments") and the request schema say the same. */
function metrics(family: ProblemFamily, requested: ThresholdMetric): { metric: SelectionMetric; threshold_metric: ThresholdMetric | null } {
  if (family === "regression") return { metric: "rmse", threshold_metric: null };
  // AUC ranks boxes by nothing a threshold can be chosen from; detection reads it as F1, like F-macro.
  if (family === "detection") return { metric: "map50", threshold_metric: requested === "auc" ? "f_macro" : requested };
  return { metric: requested, threshold_metric: requested };
}

/** The translation. The budget is resolved here (the operator's default for the mode), so the job runs what was accepted. */
export function studyOf(request: ExperimentRequest, config: Pick<Config, "BEST_BUDGET_S" | "FAST_BUDGET_S">): Study {
  const family = problemFamily(request);
  const mode = request.optimization_type === 0 ? "best" : "fast";
  return {
    command: request.study_type === "Retrospective" ? "evaluate" : "train",
    kind: pipelineKind(request),
    family,
    ...metrics(family, METRIC_BY_NAME[request.optimization_metric]),
    budget: { mode, time_budget_s: request.time_budget_s ?? (mode === "best" ? config.BEST_BUDGET_S : config.FAST_BUDGET_S) },
    zip_path: zipObjectPath(request.zip_gcloud),
    dataset: datasetTask(request),
    source_experiment_id: request.source_experiment_id ?? null,
    positive_class: request.positive_class ?? null,
    subgroup_bins: request.subgroup_bins ?? {},
    dicom:
      request.task === "vision" && (request.dicom_window != null || request.dicom_frames != null)
        ? dicomOptions(request.dicom_window, request.dicom_frames)
        : null,
  };
}

/** The stored study, parsed (not cast): a row written by other code, or by hand, fails here with the field named. */
export function parseStudy(stored: unknown): Study {
  const result = studySchema.safeParse(stored);
  if (!result.success)
    throw new Error(`the stored study is not valid: ${result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return result.data;
}
