import { describe, expect, it } from "vitest";
import { binOf } from "../../src/monitoring/baseline.js";
import { driftOf } from "../../src/monitoring/drift.js";
import { estimated, realized } from "../../src/monitoring/performance.js";
import {
  AUC_BOOTSTRAP_MAX_RECORDS,
  auc,
  aucInterval,
  chiSquared,
  jensenShannon,
  ksBinned,
  psi,
  wilson,
} from "../../src/monitoring/stats.js";

// Monitoring's statistics against reference values (scipy 1.x for chi-squared, Kolmogorov and Jensen-Shannon;
// Wilson's interval from Newcombe 1998; the AUC example from scikit-learn's roc_auc_score documentation).

describe("monitoring statistics", () => {
  it("Wilson's interval: 5 of 10 is 0.237-0.763, and 0 of 20 keeps a non-zero upper bound", () => {
    const w = wilson(5, 10);
    expect(w.value).toBe(0.5);
    expect(w.ci_low).toBeCloseTo(0.2366, 4);
    expect(w.ci_high).toBeCloseTo(0.7634, 4);
    const zero = wilson(0, 20);
    expect(zero.ci_low).toBe(0);
    expect(zero.ci_high).toBeCloseTo(0.1611, 4);
    expect(wilson(0, 0).value).toBeNull();
  });

  it("Wilson's interval holds its own value at the extremes: all n of n has an upper bound of exactly 1", () => {
    for (const n of [1, 3, 7, 10, 13, 20, 49, 100]) {
      const all = wilson(n, n);
      expect(all.value).toBe(1);
      expect(all.ci_high).toBe(1);
      expect(all.ci_low).toBeLessThan(1);
      expect(wilson(0, n).ci_low).toBe(0);
    }
  });

  it("AUC is Mann-Whitney's (ties count half) and its bootstrap interval holds it", () => {
    expect(auc([0.1, 0.4, 0.35, 0.8], [false, false, true, true])).toBe(0.75);
    expect(auc([0.5, 0.5], [false, true])).toBe(0.5);
    expect(auc([0.1, 0.2], [true, true])).toBeNull();
    const scores = Array.from({ length: 200 }, (_, i) => (i % 10) / 10 + (i % 2) * 0.3);
    const truth = scores.map((_, i) => i % 2 === 1);
    const ci = aucInterval(scores, truth);
    expect(ci.ci_low!).toBeLessThanOrEqual(ci.value!);
    expect(ci.ci_high!).toBeGreaterThanOrEqual(ci.value!);
    expect(aucInterval(scores, truth)).toEqual(ci); // seeded: the same records, the same interval
  });

  it("past AUC_BOOTSTRAP_MAX_RECORDS the AUC's interval is Hanley-McNeil's: a little wider than the bootstrap there, never narrower", () => {
    // Scores of two overlapping groups (a seeded generator): AUC near 0.8.
    let x = 7;
    const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    const n = AUC_BOOTSTRAP_MAX_RECORDS + 1;
    const truth = Array.from({ length: n }, (_, i) => i % 3 === 0);
    const scores = truth.map((t) => rnd() + (t ? 0.6 : 0));
    const formula = aucInterval(scores, truth);
    const bootstrap = aucInterval(scores.slice(0, -1), truth.slice(0, -1)); // one record fewer: the bootstrap
    expect(formula.value!).toBeGreaterThan(0.7);
    expect(formula.ci_low!).toBeLessThan(formula.value!);
    expect(formula.ci_high!).toBeGreaterThan(formula.value!);
    expect(formula.ci_low!).toBeLessThanOrEqual(bootstrap.ci_low!);
    expect(formula.ci_high!).toBeGreaterThanOrEqual(bootstrap.ci_high!);
    expect(Math.abs(formula.ci_low! - bootstrap.ci_low!)).toBeLessThan(0.004);
    expect(Math.abs(formula.ci_high! - bootstrap.ci_high!)).toBeLessThan(0.004);
  });

  it("chi-squared matches scipy's chi2_contingency (5.333, p 0.0695, 2 df)", () => {
    const c = chiSquared([10, 20, 30], [20, 20, 20]);
    expect(c.statistic).toBeCloseTo(5.3333, 4);
    expect(c.df).toBe(2);
    expect(c.p_value).toBeCloseTo(0.069483, 5);
    // Empty categories are left out of the degrees of freedom.
    expect(chiSquared([10, 0, 30], [20, 0, 20]).df).toBe(1);
  });

  it("binned Kolmogorov-Smirnov: the largest gap of the cumulative shares; identical counts give p 1", () => {
    const same = ksBinned([10, 20, 30], [10, 20, 30]);
    expect(same.statistic).toBe(0);
    expect(same.p_value).toBe(1);
    const shifted = ksBinned([50, 30, 20, 0], [0, 20, 30, 50]);
    expect(shifted.statistic).toBeCloseTo(0.6, 10);
    expect(shifted.p_value).toBeLessThan(1e-6);
  });

  it("PSI and Jensen-Shannon distance", () => {
    expect(psi([25, 25, 25, 25], [25, 25, 25, 25])).toBe(0);
    // (0.4-0.25)ln(0.4/0.25) + (0.1-0.25)ln(0.1/0.25), twice.
    expect(psi([25, 25, 25, 25], [40, 10, 40, 10])).toBeCloseTo(2 * (0.15 * Math.log(1.6) + -0.15 * Math.log(0.4)), 10);
    expect(jensenShannon([50, 50], [90, 10])).toBeCloseTo(0.383136, 5);
  });

  it("binOf counts the edges at or below the value (numpy's searchsorted side=right)", () => {
    expect([binOf([1, 2, 3], 0), binOf([1, 2, 3], 1), binOf([1, 2, 3], 2.5), binOf([1, 2, 3], 9)]).toEqual([0, 1, 2, 3]);
    expect(binOf([], 5)).toBe(0);
  });
});

describe("drift and performance on counts and records", () => {
  const baseline = {
    schema_version: 1 as const,
    source: "validation and test patients",
    n: 1000,
    columns: [
      {
        name: "glucose",
        type: "numeric" as const,
        edges: [90, 100, 110, 120],
        counts: [200, 200, 200, 200, 200],
        missing: 0,
        quantiles: { p05: 0, p25: 0, p50: 0, p75: 0, p95: 0 },
      },
      { name: "sex", type: "categorical" as const, counts: { "0": 500, "1": 500 } },
    ],
  };

  it("flags a shifted column on a large window by PSI, not the unshifted one, and says which test it used", () => {
    const d = driftOf(
      baseline,
      new Map([
        ["col:glucose", [100, 100, 200, 400, 1200, 0]],
        ["col:sex", [1010, 990, 0]],
      ]),
    );
    expect(d.status).toBe("drift");
    const [first, second] = d.features;
    expect(first).toMatchObject({ feature: "glucose", test: "psi", drifted: true, severity: "high", n: 2000, missing_rate: 0 });
    expect(second).toMatchObject({ feature: "sex", test: "jensen_shannon", drifted: false, severity: "none" });
  });

  it("uses KS and chi-squared on a small window, and says when there is not enough data", () => {
    const small = driftOf(
      baseline,
      new Map([
        ["col:glucose", [20, 20, 20, 20, 20, 0]],
        ["col:sex", [5, 5, 0]],
      ]),
    );
    expect(small.features.find((f) => f.feature === "glucose")).toMatchObject({ test: "ks", drifted: false });
    expect(small.features.find((f) => f.feature === "sex")).toMatchObject({ test: null, severity: "not_enough_data" });
    expect(driftOf(undefined, new Map()).status).toBe("no_baseline");
  });

  it("realized figures at the stored decisions, and the CBPE estimate for the unlabelled", () => {
    const at = new Date();
    const rec = (decision: number, label: number | null, p: number) => ({ requestId: "x", scores: [1 - p, p], decision, label, at });
    const records = [rec(1, 1, 0.9), rec(1, 0, 0.7), rec(0, 1, 0.3), rec(0, 0, 0.1), rec(0, 0, 0.2), rec(1, null, 0.8), rec(0, null, 0.4)];
    const r = realized(records, 1);
    expect(r.n).toBe(5);
    expect(r.sensitivity.value).toBe(0.5);
    expect(r.specificity.value).toBeCloseTo(2 / 3, 10);
    expect(r.ppv.value).toBe(0.5);
    expect(r.npv.value).toBeCloseTo(2 / 3, 10);
    const e = estimated(records, 1);
    // Flagged with p 0.8: 0.8 TP, 0.2 FP; not flagged with p 0.4: 0.4 FN, 0.6 TN.
    expect(e).toMatchObject({ estimate: true, n: 2 });
    expect(e.sensitivity).toBeCloseTo(0.8 / 1.2, 10);
    expect(e.ppv).toBeCloseTo(0.8, 10);
    expect(e.npv).toBeCloseTo(0.6, 10);
  });
});
