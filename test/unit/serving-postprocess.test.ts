import { describe, expect, it } from "vitest";
import { encodeJson } from "../../src/http/json-body.js";
import { applyThresholds, camSize, camToGradient, decodeDetections, GradientMap } from "../../src/serving/postprocess.js";
import { tabularRow } from "../../src/serving/predict.js";
import type { ServedManifest } from "../../src/serving/manifest.js";

describe("prediccion selection rules (manifest.schema.json thresholds)", () => {
  it("binary: y = scores[1] >= thresholds[1], prediccion = [1-y, y]", () => {
    expect(applyThresholds("binary", [0.75, 0.25], [0.7, 0.3])).toEqual([1, 0]);
    expect(applyThresholds("binary", [0.7, 0.3], [0.7, 0.3])).toEqual([0, 1]); // equal counts as positive
    expect(applyThresholds("binary", [0.4, 0.6], undefined)).toEqual([0, 1]);
  });
  it("multilabel: each class against its own threshold", () => {
    expect(applyThresholds("multilabel", [0.5, 0.39, 0.61], [0.5, 0.4, 0.6])).toEqual([1, 0, 1]);
    expect(applyThresholds("multilabel", [0.1, 0.1, 0.1], [0.5, 0.4, 0.6])).toEqual([0, 0, 0]);
  });
  it("multiclass: one-hot argmax whatever the thresholds, first maximum wins", () => {
    expect(applyThresholds("multiclass", [0.2, 0.5, 0.3], [0.9, 0.9, 0.9])).toEqual([0, 1, 0]);
    expect(applyThresholds("multiclass", [0.4, 0.4, 0.2])).toEqual([1, 0, 0]);
  });
  it("regression: prediccion = [value]", () => {
    expect(applyThresholds("regression", [3.25])).toEqual([3.25]);
  });
});

describe("Grad-CAM maps", () => {
  it("sizes maps to the image, longer side at most the configured maximum, never upscaled", () => {
    expect(camSize(1024, 768, 512)).toEqual({ columnas: 512, filas: 384 });
    expect(camSize(300, 1200, 512)).toEqual({ columnas: 128, filas: 512 });
    expect(camSize(100, 50, 512)).toEqual({ columnas: 100, filas: 50 });
  });
  it("normalises to 0..255 integers and keeps the hot spot where it was", () => {
    const cam = new Float32Array([0, 0, 0, 0, 5, 0, 0, 0, 1]); // 3x3, hot centre
    const g = camToGradient(cam, 3, 3, 30, 30).rows();
    expect(g).toHaveLength(30);
    expect(g[0]).toHaveLength(30);
    const flat = g.flat();
    expect(Math.max(...flat)).toBeGreaterThan(200); // normalised before resizing: the peak sits between output pixels
    expect(Math.max(...flat)).toBeLessThanOrEqual(255);
    expect(Math.min(...flat)).toBe(0);
    expect(g[15][15]).toBeGreaterThan(200);
    expect(g[0][0]).toBe(0);
  });
  it("a flat map is all zeros, not NaN", () => {
    expect(camToGradient(new Float32Array(4).fill(2), 2, 2, 3, 3).rows().flat()).toEqual(new Array(9).fill(0));
  });
});

describe("Grad-CAM maps as JSON", () => {
  it("writes the same text as JSON.stringify of the rows, for every byte value and odd shapes", () => {
    const data = new Uint8Array(256 * 3);
    data.forEach((_, i) => (data[i] = (i * 7) % 256));
    for (const [w, h] of [
      [256, 3],
      [1, 1],
      [3, 256],
      [768, 1],
    ] as const) {
      const map = new GradientMap(w, h, data.subarray(0, w * h));
      expect(map.toJsonBytes().toString("utf8")).toBe(JSON.stringify(map.rows()));
      expect(JSON.stringify(map)).toBe(JSON.stringify(map.rows()));
    }
  });
  it("a response body with maps encodes exactly as JSON.stringify would", () => {
    const map = camToGradient(new Float32Array([0, 1, 2, 3]), 2, 2, 5, 4);
    const body = {
      prediccion: [0, 1],
      score: [0.25, 0.75],
      classes: { "0": "no", "1": 'sí "x"' },
      error: 0,
      columnas: 5,
      filas: 4,
      gradients: { "1": map },
      skipped: undefined,
    };
    const text = encodeJson(body).toString("utf8");
    expect(text).toBe(JSON.stringify(body));
    expect(JSON.parse(text).gradients["1"]).toEqual(map.rows());
    expect(encodeJson({ nested: { a: [1, { b: null }], d: new Date(0) }, n: null }).toString()).toBe(
      JSON.stringify({ nested: { a: [1, { b: null }], d: new Date(0) }, n: null }),
    );
    expect(encodeJson([1, "x"]).toString()).toBe('[1,"x"]');
  });
});

describe("detection decoding", () => {
  const params = {
    scaleX: 0.5,
    scaleY: 0.5,
    origW: 100,
    origH: 80,
    scoreThreshold: 0.3,
    nmsIou: 0.5,
    maxDetections: 10,
    classAgnostic: false,
  };
  // 3 boxes (input-tensor pixels), 2 classes.
  const boxes = new Float32Array([0, 0, 20, 20, 1, 1, 21, 21, 30, 30, 60, 50]);
  const scores = new Float32Array([0.9, 0.1, 0.8, 0.7, 0.2, 0.95]);

  it("maps boxes back, clips, thresholds, NMS per class, sorts by score", () => {
    const r = decodeDetections(boxes, scores, 2, params);
    expect(r.classification).toEqual([1, 0, 1]);
    expect(r.score.map((s) => +s.toFixed(2))).toEqual([0.95, 0.9, 0.7]);
    expect(r.boxes[0]).toEqual([60, 60, 100, 80]); // 120x100 clipped to the 100x80 image
    expect(r.boxes[1]).toEqual([0, 0, 40, 40]);
  });
  it("class-agnostic NMS drops overlapping boxes of other classes too; max_detections cuts", () => {
    const r = decodeDetections(boxes, scores, 2, { ...params, classAgnostic: true });
    expect(r.classification).toEqual([1, 0]);
    expect(decodeDetections(boxes, scores, 2, { ...params, maxDetections: 1 }).score).toHaveLength(1);
  });
});

describe("tabular rows", () => {
  // classes is required by manifest.schema.json; the row checks are worked out once per manifest with them.
  const m = {
    input: {
      name: "x",
      columns: [
        { name: "age", type: "numeric" },
        { name: "sex", type: "categorical", codes: { F: 0, M: 1 } },
      ],
    },
    classes: [
      { index: 0, name: "no" },
      { index: 1, name: "yes" },
    ],
  } as unknown as ServedManifest;
  it("accepts numbers, codes and labels", () => {
    expect(Array.from(tabularRow(m, [40, 1]))).toEqual([40, 1]);
    expect(Array.from(tabularRow(m, [40, "F"]))).toEqual([40, 0]);
  });
  it.each([
    [[40]],
    [[40, 1, 2]],
    [[null, 1]],
    [["40", 1]],
    [[40, 3]],
    [[40, "toString"]],
    [[40, "constructor"]],
    [[Infinity, 1]],
    ["40,1"],
    [{ age: 40 }],
  ])("refuses %j naming the columns", (msg) => {
    expect(() => tabularRow(m, msg)).toThrow(/age, sex/);
  });
  it("takes null (as NaN) only for a numeric column trained with missing values", () => {
    const gaps = {
      ...m,
      input: {
        name: "x",
        columns: [
          { name: "age", type: "numeric", missing: true },
          { name: "bmi", type: "numeric" },
        ],
      },
    } as unknown as ServedManifest;
    const row = tabularRow(gaps, [null, 22.5]);
    expect(Number.isNaN(row[0]) && row[1] === 22.5).toBe(true);
    const detail = (msg: unknown[]) => {
      try {
        tabularRow(gaps, msg);
      } catch (err) {
        return (err as { details: { message: string }[] }).details[0].message;
      }
      throw new Error("accepted");
    };
    expect(detail([40, null])).toBe(
      "bmi: must be a finite number (the model's training data had no missing values in this column), got null",
    );
    expect(detail(["NA", 22.5])).toBe('age: must be a finite number or null when unknown, got "NA"');
    expect(detail([NaN, 22.5])).toMatch(/^age: must be a finite number or null when unknown/);
  });
});
