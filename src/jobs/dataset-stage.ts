import type { Bucket } from "../storage/bucket.js";
import type { Config } from "../config.js";

// The datasets area's prepareDataset (src/datasets/prepare.ts), typed here by what this stage uses. Loaded lazily
// so the job code stays importable in a process that never prepares data (and tests can inject a double).

export interface PreparedDataset {
  report: { valid: boolean; errors: unknown[]; warnings: unknown[]; summary: unknown };
  sha256: string;
  root?: string;
  table?: string;
  idCol?: string;
  imagesCol?: string | null;
  labelCols?: string[];
  dataCols?: string[];
  classNameCol?: string | null;
  problem?: "binary" | "multiclass" | "multilabel" | "regression" | "detection";
  split?: { seed: number; train: string[]; val: string[]; test: string[] };
}

export type PrepareDataset = (
  deps: { bucket: Bucket; config: Config },
  args: {
    zipPath: string;
    workDir: string;
    request: { task: "vision" | "data"; type_of_experiment: "classification" | "detection"; model_type: 0 | 1; label_cols: string[]; images_col?: string | null; data_cols?: string[] | null };
    seed: number;
    split: "train_val_test" | "all_test";
    signal?: AbortSignal;
  },
) => Promise<PreparedDataset>;

export async function loadPrepareDataset(): Promise<PrepareDataset> {
  const mod = (await import("../datasets/prepare.js")) as { prepareDataset: PrepareDataset };
  return mod.prepareDataset;
}
