import { DIMENSIONS, featurize } from "./features.js";
import type { TrainedWeights } from "./train.js";

// The trained matcher at answer time: one dot product per intent over a message's few hundred n-grams (features.ts
// caps what it reads), so an 8,000-character message costs what a 600-character one does (docs/chat.md).

export interface Match {
  intent: string;
  /** The softmax probability of that intent. */
  confidence: number;
  /** The runner-up, for logs and tests. */
  second: { intent: string; confidence: number };
}

const unbase64 = (s: string) => {
  const buf = Buffer.from(s, "base64");
  return new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);
};

export class IntentMatcher {
  private readonly w: Float32Array;
  private readonly lw: Float32Array;

  constructor(private readonly trained: TrainedWeights) {
    if (trained.dimensions !== DIMENSIONS) throw new Error(`intent weights have ${trained.dimensions} dimensions, features ${DIMENSIONS}`);
    const bytes = unbase64(trained.weights);
    if (bytes.length !== trained.labels.length * DIMENSIONS) throw new Error("intent weights: wrong size");
    this.w = Float32Array.from(bytes, (v, i) => v * trained.scale[Math.floor(i / DIMENSIONS)]);
    this.lw = Float32Array.from(unbase64(trained.language.weights), (v) => v * trained.language.scale);
  }

  get labels(): readonly string[] {
    return this.trained.labels;
  }

  /** The most probable intent of a message and how sure the matcher is. */
  match(message: string): Match {
    const { index, value } = featurize(message);
    const labels = this.trained.labels;
    const z = labels.map((_, k) => {
      let s = this.trained.bias[k];
      const row = k * DIMENSIONS;
      for (let j = 0; j < index.length; j++) s += this.w[row + index[j]] * value[j];
      return s;
    });
    const max = Math.max(...z);
    const e = z.map((v) => Math.exp(v - max));
    const sum = e.reduce((a, b) => a + b, 0);
    const order = e.map((v, k) => k).sort((a, b) => e[b] - e[a]);
    return {
      intent: labels[order[0]],
      confidence: e[order[0]] / sum,
      second: { intent: labels[order[1]], confidence: e[order[1]] / sum },
    };
  }

  /** P(Spanish) of a message; 0.5 when it has no words (nothing to tell by). */
  spanish(message: string): number {
    const { index, value } = featurize(message);
    if (!index.length) return 0.5;
    let s = this.trained.language.bias;
    for (let j = 0; j < index.length; j++) s += this.lw[index[j]] * value[j];
    return 1 / (1 + Math.exp(-s));
  }
}
