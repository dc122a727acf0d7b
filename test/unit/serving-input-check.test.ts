import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import type { ServedManifest } from "../../src/serving/manifest.js";
import { JsonBytes } from "../../src/serving/json-encode.js";
import {
  imageFinding,
  inputCheckHeaders,
  inputCheckOf,
  rowFinding,
  rowScore,
  settle,
  UnfamiliarInput,
} from "../../src/serving/input-check.js";

// The rule serving applies to the manifest's input_check (src/serving/input-check.ts); the pipelines apply the same
// one (vision/input_check.py `unfamiliar`, tabular/input_check.py `scores`), and the integration tests compare them.

const table = (mode: "flag" | "refuse" = "flag") =>
  ({
    kind: "tabular",
    problem: "binary",
    input: {
      name: "x",
      columns: [
        { name: "glucose", type: "numeric", min: 0, max: 199 },
        { name: "site", type: "categorical", codes: { A: 0, B: 1 } },
        { name: "age", type: "numeric", min: 21, max: 81 },
      ],
    },
    input_check: {
      mode,
      table: {
        threshold: 0.5,
        columns: [
          { name: "glucose", low: 0, high: 199, scale: 140 },
          { name: "age", low: 21, high: 81, scale: 46 },
        ],
      },
    },
  }) as unknown as ServedManifest;

const image = (mode: "flag" | "refuse" = "flag") =>
  ({
    kind: "vision_classification",
    input_check: {
      mode,
      image: {
        output: "input_check",
        threshold: 2,
        pixel_threshold: 3,
        intensity_mean: [-1, 1],
        intensity_std: [0.2, 1.6],
        roughness: [0, 0.3],
        flatness: [0, 0.5],
      },
    },
  }) as unknown as ServedManifest;

const check = (...v: number[]) => ({ input_check: new ort.Tensor("float32", Float32Array.from(v), [1, 6]) });

describe("unfamiliar inputs: the serving rule", () => {
  it("tables: far values are unfamiliar, ordinary ones and missing values are not", () => {
    const m = table();
    const row = (...v: number[]) => Float32Array.from(v);
    expect(rowFinding(m, row(130, 0, 50))).toBe("familiar");
    expect(rowFinding(m, row(1e9, 0, 50))).toBe("unfamiliar");
    expect(rowFinding(m, row(-10, 1, 500))).toBe("unfamiliar");
    expect(rowFinding(m, row(-10, 1, 50))).toBe("familiar"); // 10 below the range: 0.07 spreads
    expect(rowFinding(m, row(NaN, 0, 50))).toBe("familiar");
    expect(rowScore(m, row(130, 0, 81 + 46))).toBeCloseTo(1, 6);
    const legacy = { ...m, input_check: undefined } as ServedManifest;
    expect(rowFinding(legacy, row(1e9, 0, 50))).toBe("unchecked");
  });

  it("images: each signal alone makes an image unfamiliar; NaN too", () => {
    const m = image();
    expect(imageFinding(m, check(1, 1, 0, 1, 0.1, 0.2))).toBe("familiar");
    expect(imageFinding(m, check(2.5, 1, 0, 1, 0.1, 0.2))).toBe("unfamiliar");
    expect(imageFinding(m, check(1, 3.5, 0, 1, 0.1, 0.2))).toBe("unfamiliar");
    expect(imageFinding(m, check(1, 1, 0, 0, 0, 1))).toBe("unfamiliar"); // a blank frame
    expect(imageFinding(m, check(1, 1, 0, 1, 0.8, 0.02))).toBe("unfamiliar"); // noise
    expect(imageFinding(m, check(1, 1, 0, 1, 0.1, 0.7))).toBe("unfamiliar"); // a drawing
    expect(imageFinding(m, check(NaN, 1, 0, 1, 0.1, 0.2))).toBe("unfamiliar");
    expect(imageFinding({ ...m, input_check: undefined } as ServedManifest, check(9, 9, 9, 9, 9, 9))).toBe("unchecked");
  });

  it("the finding travels beside the body (header), and refuse throws 422 after giving an image answer back", () => {
    const body = { prediccion: [1], error: 0 };
    expect(settle(table(), body, "unfamiliar")).toBe(body);
    expect(inputCheckHeaders(body)).toEqual({ "x-input-check": "unfamiliar" });
    expect(Object.keys(body)).toEqual(["prediccion", "error"]);
    expect(inputCheckOf({})).toBe("unchecked");
    let released = 0;
    const answer = new JsonBytes(new Uint8Array(2), () => released++);
    expect(() => settle(image("refuse"), answer, "unfamiliar")).toThrow(UnfamiliarInput);
    expect(released).toBe(1);
    const refused = (() => {
      try {
        settle(table("refuse"), {}, "unfamiliar");
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toMatchObject({ status: 422, code: "unfamiliar_input" });
    expect(inputCheckOf(settle(image("refuse"), answer, "familiar"))).toBe("familiar");
  });
});
