// The operating point explorer's arithmetic, in the browser: figures at a cut of the validation curve, and the
// presets, with the same rules as the server (src/experiments/operating-point-math.ts), so that the point a preset
// shows is the point Save publishes.

export interface CurvePoint {
  threshold: number;
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

export type Rule = "sensitivity" | "specificity" | "youden" | "f1" | "threshold";

const div = (a: number, b: number) => (b > 0 ? a / b : null);

export function figuresAt(p: CurvePoint) {
  return {
    sensitivity: div(p.tp, p.tp + p.fn),
    specificity: div(p.tn, p.tn + p.fp),
    ppv: div(p.tp, p.tp + p.fp),
    npv: div(p.tn, p.tn + p.fn),
    flagged: p.tp + p.fp,
    total: p.tp + p.fp + p.tn + p.fn,
  };
}

/** The curve index a preset picks, or -1 when no cut reaches the target. */
export function presetIndex(curve: CurvePoint[], rule: Exclude<Rule, "threshold">, target = 0): number {
  const f = curve.map(figuresAt);
  const argmax = (score: (i: number) => number) => {
    let best = 0;
    for (let i = 1; i < curve.length; i++) if (score(i) > score(best)) best = i;
    return curve.length ? best : -1;
  };
  switch (rule) {
    case "sensitivity":
      return f.findIndex((x) => (x.sensitivity ?? 0) >= target - 1e-12);
    case "specificity": {
      let i = -1;
      for (let j = 0; j < curve.length; j++) if ((f[j].specificity ?? 0) >= target - 1e-12) i = j;
      return i;
    }
    case "youden":
      return argmax((i) => (f[i].sensitivity ?? 0) + (f[i].specificity ?? 0) - 1);
    case "f1":
      return argmax((i) => {
        const p = f[i].ppv ?? 0;
        const r = f[i].sensitivity ?? 0;
        return p + r > 0 ? (2 * p * r) / (p + r) : 0;
      });
  }
}

/** The index of the cut nearest a threshold (the current version's). */
export function nearestIndex(curve: CurvePoint[], threshold: number | null | undefined): number {
  if (!curve.length) return -1;
  if (threshold === null || threshold === undefined) return 0;
  let best = 0;
  for (let i = 1; i < curve.length; i++)
    if (Math.abs(curve[i].threshold - threshold) < Math.abs(curve[best].threshold - threshold)) best = i;
  return best;
}

/** "95 of 100" from 0.95; "–" when undefined. */
export function ofHundred(v: number | null | undefined): string {
  return v === null || v === undefined ? "–" : String(Math.round(v * 100));
}
