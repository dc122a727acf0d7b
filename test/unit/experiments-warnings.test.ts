import { describe, expect, it } from "vitest";
import { RULES, isInternalSplit, resultWarnings, warningsOf, type WarningInputs } from "../../src/experiments/warnings.js";

// Each rule of docs/metrics.md ("Warnings") on figures just inside and just outside its threshold.

const iv = (value: number, ci_low = value - 0.05, ci_high = value + 0.05) => ({ value, ci_low, ci_high });
const healthy: WarningInputs = {
  problem: "binary",
  metric: "auc",
  test: { auc: iv(0.85), ece: iv(0.05), sensitivity: iv(0.8), specificity: iv(0.82) },
  validation: { auc: iv(0.88) },
  clinical: {
    confusion_matrix: {
      labels: ["B", "M"],
      counts: [
        [40, 8],
        [6, 30],
      ],
    },
    test_patients_per_class: { B: 48, M: 36 },
    strongest_feature: { name: "radius", auc: 0.9 },
  },
  classCounts: { B: 357, M: 212 },
  testPatients: 84,
};
const codes = (x: WarningInputs) => resultWarnings(x).map((w) => w.code);

describe("result warnings", () => {
  it("a sound model on a fair test set raises none", () => {
    expect(resultWarnings(healthy)).toEqual([]);
  });

  it("no_better_than_chance: the AUC interval reaching 0.5, not one just above it", () => {
    const weak = { ...healthy, validation: { auc: iv(0.7) } }; // not overfitted: only the chance rule is tested here
    expect(codes({ ...weak, test: { ...healthy.test, auc: iv(0.64, 0.414, 0.865) } })).toEqual(["no_better_than_chance"]);
    expect(codes({ ...weak, test: { ...healthy.test, auc: iv(0.64, 0.5, 0.8) } })).toEqual(["no_better_than_chance"]);
    expect(codes({ ...weak, test: { ...healthy.test, auc: iv(0.64, 0.501, 0.8) } })).toEqual([]);
    const [w] = resultWarnings({ ...weak, test: { ...healthy.test, auc: iv(0.642, 0.414, 0.866) } });
    expect(w).toMatchObject({ severity: "severe", title: "not better than chance" });
    expect(w.message).toContain("0.64, and its 95% interval (0.41 to 0.87) includes 0.5");
  });

  it("perfect_score_check_leakage: a perfect test AUC, or one column separating the classes alone", () => {
    const perfect = { ...healthy, test: { ...healthy.test, auc: iv(1, 1, 1) } };
    // WDBC's 1.000 (1.000-1.000) on 86 patients: leakage check and a zero-width interval.
    expect(codes(perfect)).toEqual(["perfect_score_check_leakage", "test_set_too_small"]);
    expect(resultWarnings(perfect)[1].message).toMatch(/The 95% interval of AUC \(1\.000\) has no width/);
    // Several flat intervals: each with its own value (a model that flags everyone: sensitivity 1, specificity 0).
    const flagsAll = { ...healthy, test: { ...healthy.test, sensitivity: iv(1, 1, 1), specificity: iv(0, 0, 0) } };
    expect(resultWarnings(flagsAll).find((w) => w.code === "test_set_too_small")?.message).toMatch(
      /The 95% intervals of sensitivity \(1\.000\), specificity \(0\.000\) have no width/,
    );
    const leak = {
      ...healthy,
      clinical: { ...healthy.clinical!, strongest_feature: { name: "biopsy_code", auc: RULES.leakingFeatureAuc } },
    };
    expect(codes(leak)).toEqual(["perfect_score_check_leakage"]);
    expect(resultWarnings(leak)[0].message).toContain(
      "The column 'biopsy_code' alone separates the classes (AUC 0.990 on the training rows)",
    );
  });

  it("test_set_too_small: fewer than 10 test patients of a class; regression under 20 test patients", () => {
    const few = { ...healthy, clinical: { ...healthy.clinical!, test_patients_per_class: { B: 30, M: 9 } } };
    expect(resultWarnings(few)).toEqual([
      expect.objectContaining({
        code: "test_set_too_small",
        severity: "caution",
        message: expect.stringContaining("only 9 patients with 'M'"),
      }),
    ]);
    expect(codes({ ...healthy, clinical: { ...healthy.clinical!, test_patients_per_class: { B: 30, M: 10 } } })).toEqual([]);
    const regression: WarningInputs = {
      problem: "regression",
      metric: "rmse",
      test: { rmse: iv(2), r2: iv(0.6) },
      validation: { rmse: iv(1.9) },
      testPatients: 19,
    };
    expect(codes(regression)).toEqual(["test_set_too_small"]);
    expect(codes({ ...regression, testPatients: 20 })).toEqual([]);
  });

  it("overfitting: validation above test by more than 0.10 (regression: test RMSE over 1.5 x validation)", () => {
    expect(codes({ ...healthy, validation: { auc: iv(0.96) } })).toEqual(["overfitting"]);
    expect(codes({ ...healthy, validation: { auc: iv(0.95) } })).toEqual([]);
    const regression: WarningInputs = {
      problem: "regression",
      metric: "rmse",
      test: { rmse: iv(3.1) },
      validation: { rmse: iv(2) },
      testPatients: 50,
    };
    expect(codes(regression)).toEqual(["overfitting"]);
    expect(codes({ ...regression, test: { rmse: iv(3) } })).toEqual([]);
  });

  it("poor_calibration above an ECE of 0.10; class_imbalance under 10% of rows", () => {
    expect(codes({ ...healthy, test: { ...healthy.test, ece: iv(0.11) } })).toEqual(["poor_calibration"]);
    expect(codes({ ...healthy, test: { ...healthy.test, ece: iv(0.1) } })).toEqual([]);
    expect(resultWarnings({ ...healthy, classCounts: { B: 950, M: 99 } })).toEqual([
      expect.objectContaining({
        code: "class_imbalance",
        severity: "info",
        message: expect.stringContaining("Only 9.4% of the rows (99 of 1049) have 'M'"),
      }),
    ]);
    expect(codes({ ...healthy, classCounts: { B: 900, M: 100 } })).toEqual([]);
  });

  it("subgroup_worse: a group flagged worse by the pipeline (its AUC interval wholly below the rest), not a too_small one", () => {
    const group = (label: string, flag: "worse" | "too_small" | null, auc = iv(0.6, 0.45, 0.72)) => ({
      label,
      patients: 40,
      positives: 15,
      prevalence: 0.375,
      auc: flag === "too_small" ? null : auc,
      sensitivity: null,
      specificity: null,
      rest_auc: 0.88,
      flag,
    });
    const withGroups = (...groups: ReturnType<typeof group>[]) => ({
      ...healthy,
      clinical: { ...healthy.clinical!, subgroups: [{ column: "site", kind: "categorical" as const, groups }] },
    });
    expect(codes(withGroups(group("A", null), group("B", "too_small")))).toEqual([]);
    const [w] = resultWarnings(withGroups(group("A", null), group("C", "worse")));
    expect(w).toMatchObject({ code: "subgroup_worse", severity: "caution", title: "worse in a subgroup" });
    expect(w.message).toContain("site C (AUC 0.60, 95% interval 0.45 to 0.72, against 0.88 for the other test patients)");
  });

  it("internal_test_only: a Builder study's internal split is named as optimistic, with a Retrospective study recommended or pointed to", () => {
    expect(codes({ ...healthy, internalSplit: {} })).toEqual(["internal_test_only"]);
    const [none] = resultWarnings({ ...healthy, internalSplit: { retrospectiveStudies: 0 } });
    expect(none).toMatchObject({ severity: "info", title: "internal test only" });
    expect(none.message).toMatch(/same source, period and site as the training patients/);
    expect(none.message).toMatch(/test it on data from another period or site with a Retrospective study/);
    const [two] = resultWarnings({ ...healthy, internalSplit: { retrospectiveStudies: 2 } });
    expect(two.message).toMatch(/2 Retrospective studies of this model on other data are shown beside these figures/);
    // A Retrospective study's own figures are on new data: no such warning.
    const manifest = { problem: "binary", metric: "auc", metrics: { test: { auc: iv(0.85) }, validation: { auc: iv(0.86) } } };
    expect(warningsOf(manifest, null, isInternalSplit({ study_type: "Retrospective" }) ? {} : undefined)).toEqual([]);
    expect(warningsOf(manifest, null, isInternalSplit({ study_type: "Builder" }) ? {} : undefined).map((w) => w.code)).toEqual([
      "internal_test_only",
    ]);
  });

  it("reads a stored manifest and dataset report; a model published before issue 37 gets the rules it can", () => {
    const manifest = { problem: "binary", metric: "auc", metrics: { test: { auc: iv(0.6, 0.45, 0.75) }, validation: { auc: iv(0.9) } } };
    expect(
      warningsOf(manifest, { summary: { class_counts: { diagnosis: { B: 100, M: 90 } }, split: { test: 30 } } }).map((w) => w.code),
    ).toEqual(["no_better_than_chance", "overfitting"]);
    expect(warningsOf(undefined, null)).toEqual([]);
  });
});
