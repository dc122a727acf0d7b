import type { LabelledRecord } from "./repository.js";
import { aucInterval, wilson, type Interval } from "./stats.js";

/**
 * Performance on new patients (issue 49 item 3). Realized: from the predictions whose true outcome was posted,
 * at the operating point the prediction was made with (its stored decision), with 95 % intervals (Wilson for the
 * proportions, a bootstrap for the AUC). Estimated, for the predictions still without an outcome: the expected
 * confusion matrix from the calibrated scores (confidence-based performance estimation, NannyML's CBPE): a
 * prediction flagged positive with probability p counts p true positive and 1-p false positive. It is only as
 * good as the calibration, assumes the relation between inputs and outcome has not changed, and is always
 * labelled an estimate.
 */

export interface Realized {
  n: number;
  positives: number;
  sensitivity: Interval;
  specificity: Interval;
  ppv: Interval;
  npv: Interval;
  auc: Interval;
  accuracy: Interval;
}

export interface Estimated {
  estimate: true;
  method: "CBPE (confidence-based performance estimation from calibrated scores)";
  n: number;
  sensitivity: number | null;
  specificity: number | null;
  ppv: number | null;
  npv: number | null;
  accuracy: number | null;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

/** Binary: the class whose decision and label count as positive. Multiclass (positive undefined): accuracy only. */
/** aucResamples: the AUC's bootstrap (0: the AUC without its interval, for the alert rules, which do not read it). */
export function realized(records: LabelledRecord[], positive: number | undefined, aucResamples = 200): Realized {
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  let right = 0;
  const scores: number[] = [];
  const truth: boolean[] = [];
  for (const r of records) {
    if (r.label === null || r.decision === null) continue;
    if (r.label === r.decision) right++;
    if (positive === undefined) continue;
    const predicted = r.decision === positive;
    const actual = r.label === positive;
    if (predicted && actual) tp++;
    else if (predicted) fp++;
    else if (actual) fn++;
    else tn++;
    const s = r.scores[positive];
    if (Number.isFinite(s)) {
      scores.push(s);
      truth.push(actual);
    }
  }
  const n = records.filter((r) => r.label !== null && r.decision !== null).length;
  const none = { value: null, ci_low: null, ci_high: null };
  return {
    n,
    positives: tp + fn,
    sensitivity: positive === undefined ? none : wilson(tp, tp + fn),
    specificity: positive === undefined ? none : wilson(tn, tn + fp),
    ppv: positive === undefined ? none : wilson(tp, tp + fp),
    npv: positive === undefined ? none : wilson(tn, tn + fn),
    auc: positive === undefined ? none : aucInterval(scores, truth, aucResamples),
    accuracy: wilson(right, n),
  };
}

export function estimated(records: LabelledRecord[], positive: number | undefined): Estimated {
  let tp = 0;
  let fp = 0;
  let tn = 0;
  let fn = 0;
  let right = 0;
  let n = 0;
  for (const r of records) {
    if (r.label !== null || r.decision === null) continue;
    n++;
    if (positive === undefined) {
      right += r.scores[r.decision] ?? 0;
      continue;
    }
    const p = r.scores[positive];
    if (!Number.isFinite(p)) continue;
    if (r.decision === positive) {
      tp += p;
      fp += 1 - p;
    } else {
      fn += p;
      tn += 1 - p;
    }
  }
  const method = "CBPE (confidence-based performance estimation from calibrated scores)" as const;
  if (positive === undefined)
    return { estimate: true, method, n, sensitivity: null, specificity: null, ppv: null, npv: null, accuracy: ratio(right, n) };
  return {
    estimate: true,
    method,
    n,
    sensitivity: ratio(tp, tp + fn),
    specificity: ratio(tn, tn + fp),
    ppv: ratio(tp, tp + fp),
    npv: ratio(tn, tn + fn),
    accuracy: ratio(tp + tn, n),
  };
}
