import { describe, expect, it } from "vitest";
import { choose, figuresOf, validationCurve } from "../../src/experiments/operating-point-math.js";
import { figuresAt, nearestIndex, ofHundred, presetIndex } from "../../web/src/lib/operating-point.js";

// The explorer's presets run in the browser (web/src/lib/operating-point.ts) and again on the server when Save is
// pressed (src/experiments/operating-point-math.ts): the point the panel shows must be the point that is published.

describe("operating point explorer (browser side)", () => {
  it("picks the same cut as the server for every preset, on many random validation sets", () => {
    let seed = 11;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 50; trial++) {
      const n = 20 + Math.floor(rand() * 200);
      const label = Array.from({ length: n }, () => (rand() < 0.35 ? 1 : 0));
      label[0] = 1;
      label[1] = 0;
      // Rounded scores, so that ties happen.
      const score = label.map((y) => Math.round((0.35 * y + 0.65 * rand()) * 50) / 50);
      const curve = validationCurve(score, label);
      for (const [rule, target] of [
        ["sensitivity", 0.95],
        ["sensitivity", 0.5],
        ["specificity", 0.9],
        ["youden", undefined],
        ["f1", undefined],
      ] as const) {
        const i = presetIndex(curve, rule, target);
        let server: number | null = null;
        try {
          server = choose(curve, rule, target).threshold;
        } catch {
          server = null;
        }
        expect(i < 0 ? null : curve[i].threshold, `${rule} ${target} trial ${trial}`).toBe(server);
      }
      for (const p of curve) {
        const f = figuresAt(p);
        expect(f.sensitivity).toBe(figuresOf(p).sensitivity);
        expect(f.npv).toBe(figuresOf(p).npv);
      }
    }
  });

  it("starts at the cut nearest the current threshold and words figures per 100 patients", () => {
    const curve = validationCurve([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0]);
    expect(nearestIndex(curve, 0.5)).toBe(1);
    expect(nearestIndex(curve, null)).toBe(0);
    expect(ofHundred(0.954)).toBe("95");
    expect(ofHundred(null)).toBe("–");
  });
});
