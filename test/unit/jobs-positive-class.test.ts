import { describe, expect, it } from "vitest";
import { positiveClassProblem } from "../../src/jobs/positive-class.js";
import type { PreparedDataset } from "../../src/datasets/types.js";

// The request's positive_class against the checked dataset, before any training (the experiment ends invalid_dataset).

const prepared = (problem: PreparedDataset["problem"], counts: Record<string, number>): PreparedDataset => ({
  report: {
    valid: true,
    errors: [],
    warnings: [],
    errors_omitted: 0,
    warnings_omitted: 0,
    summary: { class_counts: { diagnosis: counts } },
  },
  sha256: "00",
  labelCols: ["diagnosis"],
  problem,
});

describe("positive_class against the dataset", () => {
  it("accepts a value of a two-valued label, and no request at all", () => {
    expect(positiveClassProblem("M", prepared("binary", { B: 357, M: 212 }))).toBeUndefined();
    expect(positiveClassProblem(null, prepared("multiclass", { a: 1, b: 2, c: 3 }))).toBeUndefined();
  });

  it("refuses a value the label does not hold, listing its values (an inherited object key is not a value)", () => {
    for (const wrong of ["malignant", "m", "constructor", "toString"]) {
      expect(positiveClassProblem(wrong, prepared("binary", { B: 357, M: 212 }))).toEqual({
        severity: "error",
        code: "positive_class_not_found",
        column: "diagnosis",
        message: `positive_class '${wrong}' is not a value of the label column 'diagnosis'; its values are B, M (write one exactly as in the CSV)`,
        key: "problems:dataset.positive_class_not_found",
        params: { value: wrong, column: "diagnosis", values: "B, M" },
      });
    }
  });

  it("refuses a label with more than two values: each class is reported one against the rest", () => {
    expect(positiveClassProblem("a", prepared("multiclass", { a: 1, b: 2, c: 3 }))).toMatchObject({
      code: "positive_class_not_binary",
      message:
        "positive_class is for a label with two values; the label column 'diagnosis' holds 3 (a, b, c), so every class is reported one against the rest",
    });
  });
});
