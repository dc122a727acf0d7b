import { prng } from "../datasets/split.js";
/**
 * The statistics monitoring reports, on bin counts (drift) and on labelled records (realized performance): small,
 * dependency-free and tested against reference values (test/unit/monitoring-stats.test.ts).
 */

export interface Interval {
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** Wilson score interval for k successes in n (95 %): well behaved at small n and near 0 or 1, unlike Wald's. */
export function wilson(k: number, n: number, z = 1.959964): Interval {
  if (n === 0) return { value: null, ci_low: null, ci_high: null };
  const p = k / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  // At k = 0 and k = n the bounds are exactly 0 and 1 (centre - half and centre + half in exact arithmetic); in floating
  // point 1 came out as 0.9999999999999999, an interval that did not hold its own value.
  return { value: p, ci_low: k === 0 ? 0 : Math.max(0, centre - half), ci_high: k === n ? 1 : Math.min(1, centre + half) };
}

/** The area under the ROC curve: the share of (positive, negative) pairs ranked right, ties half (Mann-Whitney). */
export function auc(scores: readonly number[], positive: readonly boolean[]): number | null {
  const idx = scores.map((_, i) => i).sort((a, b) => scores[a] - scores[b]);
  let rankSum = 0;
  let nPos = 0;
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1]] === scores[idx[i]]) j++;
    const rank = (i + j) / 2 + 1;
    for (let t = i; t <= j; t++) {
      if (!positive[idx[t]]) continue;
      rankSum += rank;
      nPos++;
    }
    i = j + 1;
  }
  const nNeg = idx.length - nPos;
  if (nPos === 0 || nNeg === 0) return null;
  return (rankSum - (nPos * (nPos + 1)) / 2) / (nPos * nNeg);
}

/** Above this many labelled records the interval is Hanley and McNeil's, not a bootstrap (see aucInterval). */
export const AUC_BOOTSTRAP_MAX_RECORDS = 2_000;

/**
 * AUC with a 95 % interval: a percentile bootstrap (resamples of the labelled records) up to
 * AUC_BOOTSTRAP_MAX_RECORDS, Hanley and McNeil's standard error beyond. The bootstrap sorts every resample, so its
 * cost grows with the records (77 ms on the event loop at 2,000, about 20 s at 100,000); past it the formula costs
 * one sort (31 ms at 100,000) and gives an interval a little wider than the bootstrap's, never narrower, so it does
 * not overstate how precisely the AUC is known (test/unit/monitoring-stats.test.ts).
 */
export function aucInterval(scores: number[], positive: boolean[], resamples = 200, seed = 49): Interval {
  const value = auc(scores, positive);
  if (value === null) return { value: null, ci_low: null, ci_high: null };
  if (scores.length > AUC_BOOTSTRAP_MAX_RECORDS) return hanleyMcNeil(value, positive);
  const rnd = prng(seed); // the split's mulberry32: the same records give the same bootstrap interval
  const n = scores.length;
  const got: number[] = [];
  const s = new Array<number>(n);
  const p = new Array<boolean>(n);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) {
      const j = Math.floor(rnd() * n);
      s[i] = scores[j];
      p[i] = positive[j];
    }
    const a = auc(s, p);
    if (a !== null) got.push(a);
  }
  got.sort((x, y) => x - y);
  const at = (q: number) => got[Math.min(got.length - 1, Math.max(0, Math.round(q * (got.length - 1))))];
  return { value, ci_low: got.length ? at(0.025) : null, ci_high: got.length ? at(0.975) : null };
}

/** Hanley & McNeil (1982): the AUC's standard error from the AUC and the class sizes; a normal 95 % interval in [0, 1]. */
function hanleyMcNeil(a: number, positive: boolean[]): Interval {
  let n1 = 0;
  for (const p of positive) if (p) n1++;
  const n0 = positive.length - n1;
  const q1 = a / (2 - a);
  const q2 = (2 * a * a) / (1 + a);
  const se = Math.sqrt(Math.max(0, (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0)));
  return { value: a, ci_low: Math.max(0, a - 1.96 * se), ci_high: Math.min(1, a + 1.96 * se) };
}

/** Kolmogorov's distribution's upper tail Q(λ) = 2 Σ (-1)^(k-1) exp(-2 k² λ²). */
function kolmogorovQ(lambda: number): number {
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += (k % 2 ? 1 : -1) * term;
    if (term < 1e-12) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

/** Two-sample Kolmogorov-Smirnov on counts in the same bins: the largest gap between the two cumulative shares. */
export function ksBinned(a: readonly number[], b: readonly number[]): { statistic: number; p_value: number } {
  const na = a.reduce((x, y) => x + y, 0);
  const nb = b.reduce((x, y) => x + y, 0);
  if (!na || !nb) return { statistic: 0, p_value: 1 };
  let ca = 0;
  let cb = 0;
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    ca += a[i];
    cb += b[i];
    d = Math.max(d, Math.abs(ca / na - cb / nb));
  }
  const en = Math.sqrt((na * nb) / (na + nb));
  return { statistic: d, p_value: kolmogorovQ((en + 0.12 + 0.11 / en) * d) };
}

/** ln Γ(x) (Lanczos). */
function lnGamma(x: number): number {
  const c = [76.18009172947146, -86.50532032941678, 24.01409824083091, -1.231739572450155, 0.001208650973866179, -0.000005395239384953];
  let y = x;
  const tmp = x + 5.5 - (x + 0.5) * Math.log(x + 5.5);
  let ser = 1.00000000019001;
  for (const v of c) ser += v / ++y;
  return -tmp + Math.log((2.5066282746310007 * ser) / x);
}

/** The regularized upper incomplete gamma Q(a, x): the chi-squared survival function is Q(df/2, x/2). */
function gammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  if (x < a + 1) {
    let sum = 1 / a;
    let del = sum;
    for (let n = 1; n < 500; n++) {
      del *= x / (a + n);
      sum += del;
      if (Math.abs(del) < Math.abs(sum) * 1e-14) break;
    }
    return 1 - sum * Math.exp(-x + a * Math.log(x) - lnGamma(a));
  }
  let b = x + 1 - a;
  let c = 1e300;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 500; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (Math.abs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-14) break;
  }
  return Math.exp(-x + a * Math.log(x) - lnGamma(a)) * h;
}

/** Chi-squared test of homogeneity of two count vectors over the same categories (empty categories left out). */
export function chiSquared(a: readonly number[], b: readonly number[]): { statistic: number; p_value: number; df: number } {
  const na = a.reduce((x, y) => x + y, 0);
  const nb = b.reduce((x, y) => x + y, 0);
  if (!na || !nb) return { statistic: 0, p_value: 1, df: 0 };
  let stat = 0;
  let used = 0;
  for (let i = 0; i < a.length; i++) {
    const col = a[i] + b[i];
    if (!col) continue;
    used++;
    const ea = (col * na) / (na + nb);
    const eb = (col * nb) / (na + nb);
    stat += (a[i] - ea) ** 2 / ea + (b[i] - eb) ** 2 / eb;
  }
  const df = Math.max(1, used - 1);
  return { statistic: stat, p_value: used < 2 ? 1 : gammaQ(df / 2, stat / 2), df };
}

const shares = (c: readonly number[], eps: number) => {
  const n = c.reduce((x, y) => x + y, 0) || 1;
  return c.map((v) => Math.max(v / n, eps));
};

/** Population stability index: Σ (p - q) ln(p / q), shares floored at 1e-4 so an empty bin stays finite. */
export function psi(baseline: readonly number[], current: readonly number[]): number {
  const q = shares(baseline, 1e-4);
  const p = shares(current, 1e-4);
  return p.reduce((s, pi, i) => s + (pi - q[i]) * Math.log(pi / q[i]), 0);
}

/** Jensen-Shannon distance (base 2, between 0 and 1). */
export function jensenShannon(baseline: readonly number[], current: readonly number[]): number {
  const q = shares(baseline, 0);
  const p = shares(current, 0);
  let js = 0;
  for (let i = 0; i < p.length; i++) {
    const m = (p[i] + q[i]) / 2;
    if (p[i] > 0) js += 0.5 * p[i] * Math.log2(p[i] / m);
    if (q[i] > 0) js += 0.5 * q[i] * Math.log2(q[i] / m);
  }
  return Math.sqrt(Math.max(0, js));
}
