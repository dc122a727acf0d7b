import type { DatasetProblem } from "../datasets/report.js";
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
    return {
      severity: "error",
      code: "positive_class_not_binary",
      message: `positive_class is for a label with two values; the label column '${column}' holds ${values.length} (${listed}), so every class is reported one against the rest`,
      ...(column ? { column } : {}),
    };
  }
  if (counts && !Object.hasOwn(counts, positive)) {
    return {
      severity: "error",
      code: "positive_class_not_found",
      message: `positive_class '${positive}' is not a value of the label column '${column}'; its values are ${listed} (write one exactly as in the CSV)`,
      ...(column ? { column } : {}),
    };
  }
  return undefined;
}
