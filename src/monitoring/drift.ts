import type { MonitoringBaseline, ScoreBaseline } from "./baseline.js";
import { chiSquared, jensenShannon, ksBinned, psi } from "./stats.js";

/**
 * Drift per input column and for the score (issue 49 item 4), window against baseline, bin for bin. The test
 * suits the window's size, as Evidently chooses: under 1,000 predictions a significance test (Kolmogorov-Smirnov
 * for numbers, chi-squared for categories; drift when p < 0.05); from 1,000 on, where such tests flag differences
 * too small to matter, a distance (PSI for numbers and the score, Jensen-Shannon for categories; drift at 0.1).
 * The severity comes from the PSI, reported for every feature: high at 0.25 or more, medium at 0.1, else low.
 *
 * An image model's feature summary (the network's own features on its k first principal directions) is judged per
 * component with the same tests. Its k components are one question ("do the images look, to the network, like the
 * baseline's?") asked k times: on a small window each component's p-value is compared with 0.05 / k (Bonferroni), so
 * that an unchanged stream is called drifted in at most about 5 % of windows, not in a third of them with k = 8.
 */

export const SMALL_WINDOW = 1000;
export const MIN_WINDOW = 30;
const P_DRIFT = 0.05;
const DISTANCE_DRIFT = 0.1;
const SEVERITY_MEDIUM_PSI = 0.1;
const SEVERITY_HIGH_PSI = 0.25;

/** The rules above as one record, for the model card's Monitoring section (which states them to the reader). */
export const DRIFT_RULES = {
  min_window: MIN_WINDOW,
  small_window: SMALL_WINDOW,
  p_value_below: P_DRIFT,
  distance_at_least: DISTANCE_DRIFT,
  psi_medium: SEVERITY_MEDIUM_PSI,
  psi_high: SEVERITY_HIGH_PSI,
} as const;

export type Severity = "not_enough_data" | "none" | "low" | "medium" | "high";
const ORDER: Severity[] = ["not_enough_data", "none", "low", "medium", "high"];

export interface FeatureDrift {
  feature: string;
  /** features: a component of an image model's feature summary (img:feature:1..k). */
  kind: "column" | "descriptor" | "features" | "score";
  type: "numeric" | "categorical";
  /** Predictions in the window with a value (the sample size the test saw), and the baseline's. */
  n: number;
  baseline_n: number;
  test: "ks" | "chi2" | "psi" | "jensen_shannon" | null;
  statistic: number | null;
  p_value: number | null;
  psi: number | null;
  drifted: boolean;
  severity: Severity;
  /** Numeric columns: the share of predictions sent without a value, in the window and in the baseline. */
  missing_rate?: number | null;
  baseline_missing_rate?: number;
}

/** Window counts per series name ("col:<name>", "score"), summed over hours and versions. */
export type WindowCounts = Map<string, number[]>;

function judge(
  feature: string,
  kind: FeatureDrift["kind"],
  type: FeatureDrift["type"],
  base: number[],
  win: number[],
  pDrift = P_DRIFT,
): FeatureDrift {
  const n = win.reduce((x, y) => x + y, 0);
  const baseline_n = base.reduce((x, y) => x + y, 0);
  const out: FeatureDrift = {
    feature,
    kind,
    type,
    n,
    baseline_n,
    test: null,
    statistic: null,
    p_value: null,
    psi: null,
    drifted: false,
    severity: "not_enough_data",
  };
  if (n < MIN_WINDOW || baseline_n === 0) return out;
  out.psi = psi(base, win);
  if (n < SMALL_WINDOW) {
    const t = type === "numeric" ? { test: "ks" as const, ...ksBinned(base, win) } : { test: "chi2" as const, ...chiSquared(base, win) };
    out.test = t.test;
    out.statistic = t.statistic;
    out.p_value = t.p_value;
    out.drifted = t.p_value < pDrift;
  } else if (type === "numeric") {
    out.test = "psi";
    out.statistic = out.psi;
    out.drifted = out.psi >= DISTANCE_DRIFT;
  } else {
    out.test = "jensen_shannon";
    out.statistic = jensenShannon(base, win);
    out.drifted = out.statistic >= DISTANCE_DRIFT;
  }
  out.severity = !out.drifted ? "none" : out.psi >= SEVERITY_HIGH_PSI ? "high" : out.psi >= SEVERITY_MEDIUM_PSI ? "medium" : "low";
  return out;
}

function scoreDrift(score: ScoreBaseline, win: number[] | undefined): FeatureDrift {
  return judge("score", "score", "numeric", score.counts, win ?? new Array<number>(score.counts.length).fill(0));
}

/** Every feature's drift, the worst first, and one status for the model. */
export function driftOf(baseline: MonitoringBaseline | undefined, window: WindowCounts) {
  const features: FeatureDrift[] = [];
  for (const c of baseline?.columns ?? []) {
    const win = window.get(`col:${c.name}`);
    if (c.type === "numeric") {
      const bins = c.edges.length + 1;
      const counts = win ? win.slice(0, bins) : new Array<number>(bins).fill(0);
      const d = judge(c.name, "column", "numeric", c.counts, counts);
      const missing = win?.[bins] ?? 0;
      const total = d.n + missing;
      d.missing_rate = total ? missing / total : null;
      d.baseline_missing_rate = c.missing / Math.max(1, d.baseline_n + c.missing);
      features.push(d);
    } else {
      const codes = Object.keys(c.counts).length;
      const base: number[] = [...Array.from({ length: codes }, (_, i) => c.counts[String(i)] ?? 0), 0];
      features.push(judge(c.name, "column", "categorical", base, win ?? new Array<number>(codes + 1).fill(0)));
    }
  }
  for (const d of baseline?.image?.descriptors ?? []) {
    const win = window.get(d.name);
    if (d.type === "numeric") {
      const bins = d.edges.length + 1;
      features.push(judge(d.name, "descriptor", "numeric", d.counts, win ?? new Array<number>(bins).fill(0)));
    } else {
      const base = [...Object.values(d.counts), 0];
      features.push(judge(d.name, "descriptor", "categorical", base, win ?? new Array<number>(base.length).fill(0)));
    }
  }
  // A detection model's boxes per image, box sizes and box scores, judged like numeric descriptors.
  for (const d of baseline?.detection?.descriptors ?? [])
    features.push(judge(d.name, "descriptor", "numeric", d.counts, window.get(d.name) ?? new Array<number>(d.edges.length + 1).fill(0)));
  // The feature summary's components (absent from the baselines of models built before it: no row then).
  const components = baseline?.features?.descriptors ?? [];
  for (const d of components) {
    const win = window.get(d.name) ?? new Array<number>(d.edges.length + 1).fill(0);
    features.push(judge(d.name, "features", "numeric", d.counts, win, P_DRIFT / components.length));
  }
  if (baseline?.score) features.push(scoreDrift(baseline.score, window.get("score")));
  features.sort((a, b) => ORDER.indexOf(b.severity) - ORDER.indexOf(a.severity) || (b.psi ?? -1) - (a.psi ?? -1));
  const worst = features[0]?.severity;
  const status = !baseline
    ? "no_baseline"
    : !worst || worst === "not_enough_data"
      ? "not_enough_data"
      : worst === "high" || worst === "medium"
        ? "drift"
        : worst === "low"
          ? "watch"
          : "stable";
  return { status, severity: worst ?? "not_enough_data", features };
}
