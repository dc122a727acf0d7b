import { datasetProblem, problem, type DatasetProblem } from "../datasets/report.js";
import type { PreparedDataset } from "../datasets/types.js";

/**
 * The request's positive_class against the checked dataset: the label must have two values and hold this one. A
 * mismatch is a dataset problem (the experiment ends invalid_dataset, naming the column and its values), found
 * before any training; the pipeline checks the same again (common/clinical.py) for a spec written by other code.
 */
export function positiveClassProblem(positive: string | null, prepared: PreparedDataset): DatasetProblem | undefined {
  if (positive === null) return undefined;
  const column = prepared.labelCols?.[0];
  const counts = column ? prepared.report.summary.class_counts?.[column] : undefined;
  const values = Object.keys(counts ?? {}).sort();
  const listed = values.length > 10 ? `${values.slice(0, 10).join(", ")}, ...` : values.join(", ");
  if (prepared.problem !== "binary") {
    return datasetProblem(
      "error",
      "positive_class_not_binary",
      problem("dataset.positive_class_not_binary", { column: column ?? "", count: values.length, values: listed }),
      column ? { column } : {},
    );
  }
  if (counts && !Object.hasOwn(counts, positive)) {
    return datasetProblem(
      "error",
      "positive_class_not_found",
      problem("dataset.positive_class_not_found", { value: positive, column: column ?? "", values: listed }),
      column ? { column } : {},
    );
  }
  return undefined;
}
