import type { DatasetReport } from "./report.js";

export type { DatasetReport, DatasetProblem, DatasetSummary, Severity } from "./report.js";

/** What the model learns, as far as the data checks care: decides the label checks and the split strata. */
export type ProblemFamily = "classification" | "regression" | "detection";

/** What the datasets area checks a zip for; made from the experiment request by src/experiments/study.ts. */
export interface DatasetTask {
  family: ProblemFamily;
  /** images: a column of image paths (vision, detection); table: the data_cols only. */
  inputs: "images" | "table";
  label_cols: string[];
  images_col: string | null;
  data_cols: string[];
  /** A column saying which part each row belongs to (train, validation/val, test); null: Builder's seeded split. */
  split_col: string | null;
  /** Columns the test performance is reported by (classification); each must be in the CSV. */
  subgroup_cols?: string[];
}

export type Problem = "binary" | "multiclass" | "multilabel" | "regression" | "detection";

export interface PatientSplit {
  seed: number;
  train: string[];
  val: string[];
  test: string[];
}

export interface PreparedDataset {
  report: DatasetReport;
  /** sha256 of the zip. */
  sha256: string;
  // The rest only when report.valid:
  /** Extracted folder; image paths in the table are relative to it (top-level wrapper removed). */
  root?: string;
  /** Normalised CSV for the pipeline (job-spec data.table): UTF-8, comma, header, every field quoted. */
  table?: string;
  /** Column 1's name (patient id). */
  idCol?: string;
  imagesCol?: string | null;
  labelCols?: string[];
  dataCols?: string[];
  /** An extra column mapping 1:1 to the class codes, when one exists (vision). */
  classNameCol?: string | null;
  problem?: Problem;
  split?: PatientSplit;
}

export function problemOf(task: DatasetTask, classCount: number): Problem {
  if (task.family !== "classification") return task.family;
  if (task.label_cols.length > 1) return "multilabel";
  return classCount > 2 ? "multiclass" : "binary";
}
