import type { DatasetReport } from "./report.js";

export type { DatasetReport, DatasetProblem, DatasetSummary, Severity } from "./report.js";

export interface DatasetRequest {
  task: "vision" | "data";
  type_of_experiment: "classification" | "detection";
  /** 0 classification, 1 regression. */
  model_type: 0 | 1;
  label_cols: string[];
  images_col?: string | null;
  data_cols?: string[] | null;
  /** A column saying which part each row belongs to (train, validation/val, test); unset: Builder's seeded split. */
  split_col?: string | null;
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

export function problemOf(request: DatasetRequest, classCount: number): Problem {
  if (request.type_of_experiment === "detection") return "detection";
  if (request.model_type === 1) return "regression";
  if (request.label_cols.length > 1) return "multilabel";
  return classCount > 2 ? "multiclass" : "binary";
}
