import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { defaultPython, PIPELINES_DIR } from "../pipelines-python.js";

// Public clinical tables a new team can build from before it has its own (issue 38 item 4: "try with a sample
// dataset"). They are written by the pipelines from the copies scikit-learn ships inside itself
// (pipelines/builder_pipelines/samples.py): nothing is downloaded, and no data file lives in this repository.

export interface SampleDataset {
  id: string;
  title: string;
  description: string;
  task: "data";
  label_col: string;
  rows: number;
  licence: string;
  source: string;
}

export const SAMPLES: SampleDataset[] = [
  {
    id: "breast-cancer-wisconsin",
    title: "Breast Cancer Wisconsin (Diagnostic)",
    description:
      "569 fine-needle aspirates of breast masses: diagnosis M (malignant, 212) or B (benign, 357) from 30 measurements of the cell nuclei (mean, standard error and worst of ten). One row per patient.",
    task: "data",
    label_col: "diagnosis",
    rows: 569,
    licence:
      "CC BY 4.0. Wolberg W, Mangasarian O, Street N, Street W. Breast Cancer Wisconsin (Diagnostic). UCI Machine Learning Repository, 1993. https://doi.org/10.24432/C5DW2B. Copied from the scikit-learn package (BSD-3-Clause), which ships it.",
    source: "scikit-learn's load_breast_cancer",
  },
];

const run = promisify(execFile);

/** Writes the sample's CSV (Builder's data-task layout) to `out`; returns its row count. */
export async function writeSampleCsv(sample: SampleDataset, out: string, pythonBin?: string): Promise<number> {
  const { stdout } = await run(defaultPython(pythonBin), ["-m", "builder_pipelines.samples", sample.id, out], {
    cwd: PIPELINES_DIR,
    timeout: 60_000,
  });
  return Number(stdout.trim());
}
