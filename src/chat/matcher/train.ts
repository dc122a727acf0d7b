import { createHash } from "node:crypto";
import { DIMENSIONS, featurize, type Features } from "./features.js";

// Training of the intent matcher (issue 53): a multinomial logistic regression over the hashed n-grams of
// features.ts, fitted to the example questions of src/chat/intents/*.json by full-batch gradient descent with a
// fixed number of steps and no randomness, so the same table gives the same weights byte for byte; and beside it a
// two-class one for the language, from the same examples. Weights are stored as int8 with one scale per class.

export interface Example {
  text: string;
  intent: string;
  lang: "en" | "es";
}

/** The table as the team edits it: per language, intent → example questions. */
export type IntentTable = Record<string, string[]>;

export interface TrainedWeights {
  version: 1;
  dimensions: number;
  /** sha256 of the examples it was trained on, in order: a stale file is noticed. */
  examples_sha256: string;
  examples: number;
  labels: string[];
  bias: number[];
  scale: number[];
  /** int8 per label × bucket, row-major, base64. */
  weights: string;
  language: { bias: number; scale: number; weights: string };
}

const STEPS = 400;
const LEARNING_RATE = 2;
const MOMENTUM = 0.9;
const L2 = 1e-5;

export function examplesOf(tables: Record<"en" | "es", IntentTable>): Example[] {
  const out: Example[] = [];
  for (const lang of ["en", "es"] as const)
    for (const intent of Object.keys(tables[lang]).sort()) for (const text of tables[lang][intent]) out.push({ text, intent, lang });
  return out;
}

export const examplesHash = (examples: Example[]) =>
  createHash("sha256")
    .update(JSON.stringify(examples.map((e) => [e.lang, e.intent, e.text])))
    .digest("hex");

/**
 * Softmax regression: weights[k * D + d], bias[k]. `targets[i]` is the class of example i. Each class weighs the
 * same in the loss whatever its number of examples, so an intent with many examples does not swallow a rare one.
 */
function fit(xs: Features[], targets: number[], classes: number): { w: Float64Array; b: Float64Array } {
  const D = DIMENSIONS;
  const w = new Float64Array(classes * D);
  const b = new Float64Array(classes);
  const vw = new Float64Array(classes * D);
  const vb = new Float64Array(classes);
  const gw = new Float64Array(classes * D);
  const gb = new Float64Array(classes);
  const p = new Float64Array(classes);
  const n = xs.length;
  const perClass = new Float64Array(classes);
  for (const t of targets) perClass[t]++;
  const weight = targets.map((t) => Math.sqrt(n / (classes * perClass[t])));
  for (let step = 0; step < STEPS; step++) {
    gw.fill(0);
    gb.fill(0);
    for (let i = 0; i < n; i++) {
      const { index, value } = xs[i];
      let max = -Infinity;
      for (let k = 0; k < classes; k++) {
        let z = b[k];
        const row = k * D;
        for (let j = 0; j < index.length; j++) z += w[row + index[j]] * value[j];
        p[k] = z;
        if (z > max) max = z;
      }
      let sum = 0;
      for (let k = 0; k < classes; k++) sum += p[k] = Math.exp(p[k] - max);
      for (let k = 0; k < classes; k++) {
        const g = (weight[i] * (p[k] / sum - (targets[i] === k ? 1 : 0))) / n;
        if (g === 0) continue;
        gb[k] += g;
        const row = k * D;
        for (let j = 0; j < index.length; j++) gw[row + index[j]] += g * value[j];
      }
    }
    for (let q = 0; q < w.length; q++) {
      vw[q] = MOMENTUM * vw[q] - LEARNING_RATE * (gw[q] + L2 * w[q]);
      w[q] += vw[q];
    }
    for (let k = 0; k < classes; k++) {
      vb[k] = MOMENTUM * vb[k] - LEARNING_RATE * gb[k];
      b[k] += vb[k];
    }
  }
  return { w, b };
}

/** int8 with one scale per row: a quarter of the size of float32, and exactly reproducible from the float weights. */
function quantize(w: Float64Array, rows: number): { scale: number[]; bytes: Int8Array } {
  const D = w.length / rows;
  const bytes = new Int8Array(w.length);
  const scale: number[] = [];
  for (let k = 0; k < rows; k++) {
    let max = 0;
    for (let d = 0; d < D; d++) max = Math.max(max, Math.abs(w[k * D + d]));
    const s = max / 127 || 1;
    scale.push(Number(s.toPrecision(6)));
    for (let d = 0; d < D; d++) bytes[k * D + d] = Math.round(w[k * D + d] / scale[k]);
  }
  return { scale, bytes };
}

const base64 = (bytes: Int8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
const round = (x: number) => Number(x.toPrecision(6));

export function train(examples: Example[]): TrainedWeights {
  const labels = [...new Set(examples.map((e) => e.intent))].sort();
  const xs = examples.map((e) => featurize(e.text));
  const intents = fit(
    xs,
    examples.map((e) => labels.indexOf(e.intent)),
    labels.length,
  );
  const q = quantize(intents.w, labels.length);
  // The language: two classes, of which the difference of the rows is the one that matters.
  const lang = fit(
    xs,
    examples.map((e) => (e.lang === "es" ? 1 : 0)),
    2,
  );
  const diff = new Float64Array(DIMENSIONS);
  for (let d = 0; d < DIMENSIONS; d++) diff[d] = lang.w[DIMENSIONS + d] - lang.w[d];
  const ql = quantize(diff, 1);
  return {
    version: 1,
    dimensions: DIMENSIONS,
    examples_sha256: examplesHash(examples),
    examples: examples.length,
    labels,
    bias: [...intents.b].map(round),
    scale: q.scale,
    weights: base64(q.bytes),
    language: { bias: round(lang.b[1] - lang.b[0]), scale: ql.scale[0], weights: base64(ql.bytes) },
  };
}
