import { msg, say, type Message } from "../errors.js";
/**
 * Operating points of a binary model, from score/label pairs (pipelines/builder_pipelines/common/operating_scores.py):
 * a row is flagged positive when the positive class's probability is at or above the threshold.
 *
 * Thresholds are chosen on the validation (or out-of-fold) pairs only; the test pairs give the figures at the
 * chosen point, with 95% bootstrap intervals that resample whole patients, as the pipelines' test metrics do
 * (common/metrics.py: percentiles 2.5 and 97.5 of the replicates where a figure is defined, at least 20 of them).
 */

import { prng } from "../datasets/split.js";

export const RULES = ["sensitivity", "specificity", "youden", "f1", "threshold"] as const;
export type Rule = (typeof RULES)[number];

export interface Counts {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

/** One cut point of the validation curve: flag every row whose score is at or above `threshold`. */
export interface CurvePoint extends Counts {
  threshold: number;
}

export interface Figures {
  sensitivity: number | null;
  specificity: number | null;
  ppv: number | null;
  npv: number | null;
  accuracy: number | null;
  f_macro: number | null;
  precision: number | null;
  recall: number | null;
}

export const FIGURES = ["sensitivity", "specificity", "ppv", "npv", "accuracy", "f_macro", "precision", "recall"] as const;

const div = (a: number, b: number) => (b > 0 ? a / b : null);
const round = (v: number, d = 6) => Math.round(v * 10 ** d) / 10 ** d;

export function figuresOf(c: Counts): Figures {
  const n = c.tp + c.fp + c.tn + c.fn;
  // Macro over the two classes, as common/metrics.py (a class counts when it is in the truth or the decisions).
  const perClass = [
    { p: div(c.tp, c.tp + c.fp) ?? 0, r: div(c.tp, c.tp + c.fn) ?? 0, present: c.tp + c.fn + c.fp > 0 },
    { p: div(c.tn, c.tn + c.fn) ?? 0, r: div(c.tn, c.tn + c.fp) ?? 0, present: c.tn + c.fp + c.fn > 0 },
  ].filter((k) => k.present);
  const f1 = (k: { p: number; r: number }) => (k.p + k.r > 0 ? (2 * k.p * k.r) / (k.p + k.r) : 0);
  const macro = (f: (k: { p: number; r: number }) => number) =>
    perClass.length ? perClass.reduce((s, k) => s + f(k), 0) / perClass.length : null;
  return {
    sensitivity: div(c.tp, c.tp + c.fn),
    specificity: div(c.tn, c.tn + c.fp),
    ppv: div(c.tp, c.tp + c.fp),
    npv: div(c.tn, c.tn + c.fn),
    accuracy: div(c.tp + c.tn, n),
    f_macro: macro(f1),
    precision: macro((k) => k.p),
    recall: macro((k) => k.r),
  };
}

export function countsAt(score: ArrayLike<number>, label: ArrayLike<number>, threshold: number): Counts {
  const c = { tp: 0, fp: 0, tn: 0, fn: 0 };
  for (let i = 0; i < score.length; i++) {
    const flagged = score[i] >= threshold;
    if (label[i] === 1) {
      if (flagged) c.tp++;
      else c.fn++;
    } else if (flagged) c.fp++;
    else c.tn++;
  }
  return c;
}

/**
 * Every distinct cut of the validation pairs, highest threshold first. Each threshold lies halfway between two
 * neighbouring distinct scores (the lowest: just under the lowest score), as the pipelines place theirs, so that a
 * score equal to a validation score is never on the edge and float noise between runtimes does not flip it.
 */
export function validationCurve(score: ArrayLike<number>, label: ArrayLike<number>): CurvePoint[] {
  const order = Array.from({ length: score.length }, (_, i) => i).sort((a, b) => score[b] - score[a]);
  const pos = Array.from(label).filter((y) => y === 1).length;
  const neg = score.length - pos;
  const out: CurvePoint[] = [];
  let tp = 0;
  let fp = 0;
  for (let j = 0; j < order.length; j++) {
    const i = order[j];
    if (label[i] === 1) tp++;
    else fp++;
    const next = j + 1 < order.length ? score[order[j + 1]] : undefined;
    if (next !== undefined && next === score[i]) continue; // not the last row of this distinct score
    const threshold = next === undefined ? Math.max(0, score[i] - 1e-3) : (score[i] + next) / 2;
    out.push({ threshold: round(threshold, 9), tp, fp, tn: neg - fp, fn: pos - tp });
  }
  return out;
}

/** No threshold meets the rule's target, in catalog words. */
export class NoThreshold extends Error {
  constructor(public readonly text: Message) {
    super(say(text, "en"));
  }
}

/** The curve point a rule picks (sensitivity/specificity: `target` in [0, 1]). */
export function choose(curve: CurvePoint[], rule: Exclude<Rule, "threshold">, target?: number): CurvePoint {
  if (!curve.length) throw new NoThreshold(msg("operating.no_validation_scores"));
  const f = curve.map(figuresOf);
  const pick = (score: (i: number) => number) => {
    let best = 0;
    for (let i = 1; i < curve.length; i++) if (score(i) > score(best)) best = i;
    return curve[best];
  };
  switch (rule) {
    case "sensitivity": {
      // The highest threshold that reaches it: the fewest flagged patients for that sensitivity.
      const i = f.findIndex((x) => (x.sensitivity ?? 0) >= target! - 1e-12);
      if (i < 0) throw new NoThreshold(msg("operating.no_sensitivity", { target: target! }));
      return curve[i];
    }
    case "specificity": {
      // The lowest threshold that keeps it: the most patients found at that specificity.
      let i = -1;
      for (let j = 0; j < curve.length; j++) if ((f[j].specificity ?? 0) >= target! - 1e-12) i = j;
      if (i < 0) throw new NoThreshold(msg("operating.no_specificity", { target: target! }));
      return curve[i];
    }
    case "youden":
      return pick((i) => (f[i].sensitivity ?? 0) + (f[i].specificity ?? 0) - 1);
    case "f1":
      return pick((i) => {
        const p = f[i].ppv ?? 0;
        const r = f[i].sensitivity ?? 0;
        return p + r > 0 ? (2 * p * r) / (p + r) : 0;
      });
  }
}

function renumber(patient: ArrayLike<number>): (p: number) => number {
  const slot = new Map<number, number>();
  for (let i = 0; i < patient.length; i++) if (!slot.has(patient[i])) slot.set(patient[i], slot.size);
  return (p) => slot.get(p)!;
}

/** numpy.percentile's default (linear interpolation). */
function percentile(sorted: number[], q: number): number {
  const pos = (sorted.length - 1) * (q / 100);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export type Interval = { value: number | null; ci_low: number | null; ci_high: number | null };
export type FiguresWithIntervals = Record<(typeof FIGURES)[number], Interval> & { counts: Counts; n: number };

export const N_BOOT = 1000;

/** Patient draws between two yields to the event loop (~1-2 ms of work). */
const DRAWS_PER_SLICE = 50_000;

/**
 * The figures at `threshold` on the test pairs, each with a 95% interval from `nBoot` resamples of whole patients
 * (`patient`: one number per row). Cost: nBoot x patients draws, ~10-40 ns each: 1,000 patients ~30 ms,
 * 50,000 patients ~3 s (bench in test/unit/operating-point.test.ts). The resamples run in slices of
 * DRAWS_PER_SLICE draws with a yield to the event loop between them, so a large test set never stalls other
 * requests for more than a few milliseconds.
 */
export async function figuresWithIntervals(
  pairs: { score: ArrayLike<number>; label: ArrayLike<number>; patient: ArrayLike<number> },
  threshold: number,
  nBoot = N_BOOT,
  seed = 0,
): Promise<FiguresWithIntervals> {
  const n = pairs.score.length;
  // Per patient: counts at the threshold (rows of one patient move together), four to a patient in one array
  // (tp, fp, tn, fn). The pipeline numbers patients 0, 1, ... so the number is the slot; others are renumbered.
  let top = -1;
  let dense = true;
  for (let i = 0; i < n; i++) {
    const p = pairs.patient[i];
    if (!Number.isInteger(p) || p < 0 || p > 4 * n) dense = false;
    else if (p > top) top = p;
  }
  const slotOf = dense ? (p: number) => p : renumber(pairs.patient);
  const wide = new Int32Array(4 * (dense ? top + 1 : n));
  for (let i = 0; i < n; i++) {
    const flagged = pairs.score[i] >= threshold;
    wide[4 * slotOf(pairs.patient[i]) + (pairs.label[i] === 1 ? (flagged ? 0 : 3) : flagged ? 1 : 2)]++;
  }
  // Numbers no row uses are not patients.
  let used = 0;
  for (let j = 0; j < wide.length; j += 4) if (wide[j] + wide[j + 1] + wide[j + 2] + wide[j + 3] > 0) used++;
  const counts = used * 4 === wide.length ? wide : new Int32Array(4 * used);
  if (counts !== wide) {
    let k = 0;
    for (let j = 0; j < wide.length; j += 4) {
      if (wide[j] + wide[j + 1] + wide[j + 2] + wide[j + 3] === 0) continue;
      counts.set(wide.subarray(j, j + 4), k);
      k += 4;
    }
  }
  const m = counts.length / 4;
  const total = { tp: 0, fp: 0, tn: 0, fn: 0 };
  for (let j = 0; j < counts.length; j += 4) {
    total.tp += counts[j];
    total.fp += counts[j + 1];
    total.tn += counts[j + 2];
    total.fn += counts[j + 3];
  }
  const point = figuresOf(total);
  const samples: Record<string, number[]> = Object.fromEntries(FIGURES.map((k) => [k, [] as number[]]));
  const next = prng(seed); // mulberry32: the same intervals for the same pairs on every replica
  let drawn = 0;
  for (let b = 0; b < nBoot; b++) {
    if ((drawn += m) > DRAWS_PER_SLICE) {
      drawn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
    let tp = 0;
    let fp = 0;
    let tn = 0;
    let fn = 0;
    for (let r = 0; r < m; r++) {
      const j = Math.floor(next() * m) * 4;
      tp += counts[j];
      fp += counts[j + 1];
      tn += counts[j + 2];
      fn += counts[j + 3];
    }
    const f = figuresOf({ tp, fp, tn, fn });
    for (const k of FIGURES) if (f[k] !== null) samples[k].push(f[k]);
  }
  const out = { counts: total, n } as FiguresWithIntervals;
  for (const k of FIGURES) {
    const s = samples[k].sort((a, b) => a - b);
    const ok = s.length >= 20;
    out[k] = {
      value: point[k] === null ? null : round(point[k]),
      ci_low: ok ? round(percentile(s, 2.5)) : null,
      ci_high: ok ? round(percentile(s, 97.5)) : null,
    };
  }
  return out;
}

export function roundedFigures(c: Counts): Figures & { counts: Counts; n: number } {
  const f = figuresOf(c);
  const r = Object.fromEntries(FIGURES.map((k) => [k, f[k] === null ? null : round(f[k])])) as unknown as Figures;
  return { ...r, counts: c, n: c.tp + c.fp + c.tn + c.fn };
}

const round9 = (v: number) => Math.round(v * 1e9) / 1e9;

/**
 * The manifest's binary `thresholds` for a threshold `t` on the positive class's probability. Serving calls class 1
 * when scores[1] >= thresholds[1] (manifest schema); with class 0 positive, a patient is flagged when class 1's
 * probability is below 1 - t, i.e. class 0's above t (thresholds sit between validation scores, so the edge is not met).
 */
export function binaryThresholds(positiveIndex: number, t: number): number[] {
  return positiveIndex === 1 ? [round9(1 - t), t] : [t, round9(1 - t)];
}

/** The threshold on the positive class's probability that binary `thresholds` mean (binaryThresholds' inverse). */
export function positiveThreshold(thresholds: number[] | undefined | null, positiveIndex: number): number | null {
  if (!thresholds || thresholds.length !== 2) return null;
  return positiveIndex === 1 ? thresholds[1] : round9(1 - thresholds[1]);
}
