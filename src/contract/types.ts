// TypeScript views of pipelines/contract/*.schema.json. The schemas are the source; these types list only what
// the TypeScript side reads or writes, and test/unit/contract-drift.test.ts fails when they stop matching the schemas.

export type PipelineKind = "vision_classification" | "detection" | "tabular";
export type Problem = "binary" | "multiclass" | "multilabel" | "regression" | "detection";
/** What decision thresholds are chosen for (job spec threshold_metric). */
export type ThresholdMetric = "auc" | "f_macro" | "precision" | "recall";
/** What models are selected on (job spec and manifest metric): rmse for regression, map50 for detection. */
export type SelectionMetric = ThresholdMetric | "rmse" | "map50";
export const METRIC_NAMES = [
  "auc",
  "f_macro",
  "precision",
  "recall",
  "accuracy",
  "ece",
  "mae",
  "rmse",
  "r2",
  "map50",
  "map50_95",
  "sensitivity",
  "specificity",
  "ppv",
  "npv",
  "prevalence",
  "calibration_slope",
  "calibration_intercept",
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** A pretrained backbone as the job spec names it: pinned by SHA-256, with its licence and the recipe it fits. */
export interface BackboneSpec {
  name: string;
  sha256: string;
  licence: string;
  source: string;
  family: "resnet" | "mobile";
  width: number;
  depth: number;
  native_side: number;
}

export interface JobSpec {
  schema_version: 1;
  job_id: string;
  command: "train" | "evaluate";
  kind: PipelineKind;
  problem: Problem;
  data: {
    root: string;
    table: string;
    id_col: string;
    images_col?: string | null;
    label_cols: string[];
    data_cols?: string[];
    /** Columns the test performance is reported by (manifest clinical.subgroups). */
    subgroup_cols?: string[];
    /** Per subgroup column, cut points instead of quartiles. */
    subgroup_bins?: Record<string, number[]>;
    class_name_col?: string | null;
    sha256?: string;
  };
  split: { seed: number; train: string[]; val: string[]; test: string[] };
  metric: SelectionMetric;
  threshold_metric: ThresholdMetric | null;
  budget: { mode: "best" | "fast"; time_budget_s: number };
  seed: number;
  device: "auto" | "cpu" | "cuda";
  out_dir: string;
  source_model?: { dir: string } | null;
  /** Binary classification: the label value whose sensitivity, specificity, PPV and NPV are reported (null: the rarer class). */
  positive_class?: string | null;
  options?: {
    allow_flips?: boolean;
    pretrained_weights?: string | null;
    /** The installed pretrained backbone whose file is pretrained_weights (src/backbones). */
    backbone?: BackboneSpec | null;
    max_image_side?: number;
    threads?: number;
    dicom?: { window?: DicomWindow; frames?: DicomFrames };
  };
}

/** Which VOI window renders a DICOM's modality values as grey levels (the manifest schema states the formula). */
export interface DicomWindow {
  source: "file" | "preset" | "explicit";
  /** preset: its name (lung, mediastinum, bone, brain, soft_tissue, abdomen, liver). */
  name?: string;
  center?: number;
  width?: number;
}
export type DicomFrames = "first" | "all";

/** manifest.input.image.dicom: how a DICOM becomes the 8-bit image the rest of ImageSpec then resizes. */
export interface DicomRendering {
  modality_lut: boolean;
  window: DicomWindow;
  invert_monochrome1: boolean;
  frames: DicomFrames;
  /**
   * A grey frame without a window: "as_stored" keeps unsigned values of at most 8 bits stored as grey levels (what a
   * PNG of the same pixels holds) and stretches deeper ones min..max; "min_max" (absent: records written before the
   * field) stretches every such frame min..max.
   */
  unwindowed_8bit?: "as_stored" | "min_max";
}

export interface MetricValue {
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
  per_class?: Record<string, { value: number | null; ci_low: number | null; ci_high: number | null }>;
}
export type Metrics = Partial<Record<MetricName, MetricValue>>;

/** manifest.input.image: how serving turns an image into the input tensor. */
export interface ImageSpec {
  width: number;
  height: number;
  channels: 1 | 3;
  resize: "stretch" | "letterbox";
  interpolation: "bilinear" | "nearest" | "bicubic";
  pad_value?: number;
  scale: number;
  mean: number[];
  std: number[];
  /** Present when the model was trained on DICOM files. */
  dicom?: DicomRendering;
}

/** manifest.input.columns[]: a tabular model's features, in the order the graph takes them. */
export interface ColumnSpec {
  name: string;
  type: "numeric" | "categorical";
  codes?: Record<string, number>;
  min?: number;
  max?: number;
  /** Numeric: the training table had missing-value markers here; /predict takes null for this column. */
  missing?: boolean;
  /** What a Retrospective study uses for a value the model never saw (training median / most frequent category). */
  fill?: number | string;
}

/** manifest.clinical: the test split's positive class, confusion matrix and the facts warnings are computed from. */
export interface ClinicalSection {
  positive_class?: { index: number; code: string; name: string; rule: string };
  /** Rows the true class, columns the predicted class; multilabel: per_label 2x2 tables [[tn, fp], [fn, tp]]. */
  confusion_matrix: { labels: string[]; counts?: number[][]; per_label?: Record<string, number[][]> };
  test_patients_per_class: Record<string, number>;
  strongest_feature?: { name: string; auc: number };
  /** Per subgroup column: each group's counts and figures with intervals, and its flag (docs/metrics.md, Subgroups). */
  subgroups?: SubgroupColumn[];
  /** Binary: net benefit at threshold probabilities 0.01..0.99 for the model and for treating everyone (treat none is 0). */
  decision_curve?: { thresholds: number[]; model: Array<number | null>; treat_all: Array<number | null> };
}

export interface SubgroupInterval {
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** manifest.clinical.subgroups[]: one subgroup column of the request. */
export interface SubgroupColumn {
  column: string;
  kind: "categorical" | "quartiles" | "bins";
  /** Why the column was not grouped (free text or an identifier). */
  skipped?: string;
  groups: Array<{
    label: string;
    patients: number;
    positives: number | null;
    prevalence: number | null;
    auc: SubgroupInterval | null;
    sensitivity: SubgroupInterval | null;
    specificity: SubgroupInterval | null;
    rest_auc?: number | null;
    flag: "worse" | "too_small" | null;
  }>;
}

/** How serving tells an input unlike the training data (manifest input_check; docs/monitoring.md#unfamiliar-inputs). */
export interface InputCheckSpec {
  mode: "flag" | "refuse";
  /**
   * Images: model.onnx's `output` is [N, 6 + projected_components] (feature distance, pixel distance, input mean, std,
   * roughness, flatness, then the feature summary's standardised projections).
   */
  image?: {
    output: string;
    threshold: number;
    pixel_threshold: number;
    /** How many standardised feature projections follow the six check values (monitoring's feature drift); absent: none. */
    projected_components?: number;
    intensity_mean: [number, number];
    intensity_std: [number, number];
    roughness: [number, number];
    flatness: [number, number];
    [more: string]: unknown;
  };
  /** Tables: per numeric column its training range and scale; a row's score is its largest excess in scales. */
  table?: { threshold: number; columns: Array<{ name: string; low: number; high: number; scale: number }>; [more: string]: unknown };
}

/** manifest.json: the one type for it (the orchestrator publishes it, serving reads its view of it). */
export interface Manifest {
  schema_version: 1;
  kind: PipelineKind;
  problem: Problem;
  model_file: string;
  input: { name: string; image?: ImageSpec; columns?: ColumnSpec[] };
  outputs: { scores: string; cam?: string; boxes?: string };
  classes: Array<{ index: number; code: string; name: string }>;
  thresholds?: number[];
  threshold_rule?: string;
  /** Binary: the positive class's validation (or out-of-fold) and test scores with their truth (operating points). */
  operating_scores_file?: string;
  /** Set on a version published by saving an operating point (src/experiments/operating-point.ts writes the rest). */
  operating_point?: { rule: "sensitivity" | "specificity" | "youden" | "f1" | "threshold"; target?: number | null; threshold: number };
  detection?: { score_threshold: number; nms_iou: number; max_detections: number; class_agnostic_nms?: boolean };
  /** Unfamiliar-input detection (src/serving/input-check.ts); absent on models built before it. */
  input_check?: InputCheckSpec;
  metric: SelectionMetric;
  metrics: { test: Metrics; validation?: Metrics };
  figures: Array<{ name: string; file: string; title: string }>;
  clinical?: ClinicalSection;
  report_file?: string;
  model_summary?: { onnx_parity?: { max_abs_diff: Record<string, number> }; [other: string]: unknown };
  provenance: {
    dataset_sha256: string | null;
    seed: number;
    split_counts: { train: number; val: number; test: number };
    code_version: string;
    time_taken_s: number;
    created_at: string;
    device?: string;
    framework?: Record<string, string>;
  };
}

export type PipelineEvent =
  | {
      type: "progress";
      stage: "preparing" | "training" | "evaluating" | "exporting";
      progress: number;
      /** English, for the job log; a reader's words come from key and params. */
      message?: string;
      /** What is being done (pipelines/contract/progress-messages.json); its words are the catalog's progress:pipeline.<key>. */
      key?: string;
      params?: Record<string, string | number>;
      epoch?: number;
      epochs?: number;
      trial?: number;
      trials?: number;
      best_metric?: number | null;
      eta_s?: number | null;
    }
  | { type: "metric"; split: "train" | "val" | "test"; name: string; value: number | null; epoch?: number; trial?: number }
  | {
      type: "log";
      level: "debug" | "info" | "warn" | "error";
      message: string;
      /** A data problem's key (pipelines/contract/data-problems.json); its words are the catalog's problems:pipeline.<key>. */
      key?: string;
      params?: Record<string, string | number>;
    }
  | { type: "artifact"; path: string; kind?: string }
  | { type: "result"; manifest: string };
