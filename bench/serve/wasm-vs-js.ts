/**
 * Serving's WebAssembly loops against their JavaScript reference (test/oracles/), one machine, one run: the
 * figure behind docs/prediction.md's sentence on them. Production runs only the WebAssembly; the JavaScript is
 * what the tests compare it with, so this says what the WebAssembly buys, not what serving would fall back to.
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/wasm-vs-js.ts [--samples 200]
 *
 * Cases: a 1280x960 photo resized to 224x224 bilinear, RGB and grey (resizeLikePillow as serving calls it, its
 * result a view of the WebAssembly memory, against resizeLikePillowJs; both compute the same plan first); the
 * normalisation of a 224x224x3 image (normaliseWasm, the pixels copied in, against normaliseJs, one table); a
 * 512x384 Grad-CAM map from a 28x28 grid: camToGradient's row blend (blendRowsWasm against blendRowsJs, into a
 * reused buffer) and its JSON text (GradientMap.writeJson against writeJsonJs, into a reused buffer). Each sample
 * times a batch of calls of one side; the two sides alternate sample by sample (which goes first alternates too),
 * so a change in the host's load falls on both. Prints the median per call and the spread (quartiles); checks
 * once per case that both sides give the same bytes. Asserts nothing else.
 */
import os from "node:os";
import { blendRowsWasm } from "../../src/serving/maps-wasm.js";
import { normaliseWasm } from "../../src/serving/pixels-wasm.js";
import { GradientMap } from "../../src/serving/postprocess.js";
import { resizeLikePillow } from "../../src/serving/resample.js";
import { blendRowsJs, writeJsonJs } from "../../test/oracles/maps-js.js";
import { normaliseJs } from "../../test/oracles/normalise-js.js";
import { resizeLikePillowJs } from "../../test/oracles/resample-js.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const SAMPLES = arg("--samples", 200);

let seed = 20261128;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

/** A photo-like image: smooth gradients plus noise (resampling cost does not depend on the values). */
function photo(w: number, h: number, c: number): Uint8Array {
  const px = new Uint8Array(w * h * c);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) for (let b = 0; b < c; b++) px[(y * w + x) * c + b] = (x * (b + 1) + y * 2 + Math.floor(rnd() * 24)) & 255;
  return px;
}

interface Case {
  name: string;
  /** Calls per sample, so that a sample lasts long enough for the clock. */
  batch: number;
  wasm: () => Uint8Array | Float32Array | number;
  js: () => Uint8Array | Float32Array | number;
  /** The bytes each side produced, to compare once. */
  same: () => boolean;
}

const bytesOf = (a: Uint8Array | Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

function resizeCase(c: 1 | 3): Case {
  const src = photo(1280, 960, c);
  return {
    name: `resize 1280x960 ${c === 3 ? "RGB" : "grey"} -> 224x224 bilinear`,
    batch: 1,
    wasm: () => resizeLikePillow(src, 1280, 960, c, 224, 224, "bilinear", true),
    js: () => resizeLikePillowJs(src, 1280, 960, c, 224, 224, "bilinear"),
    same: () =>
      bytesOf(resizeLikePillow(src, 1280, 960, c, 224, 224, "bilinear")).equals(
        bytesOf(resizeLikePillowJs(src, 1280, 960, c, 224, 224, "bilinear")),
      ),
  };
}

function normaliseCase(): Case {
  const c = 3,
    plane = 224 * 224;
  const pixels = photo(224, 224, c);
  const f = Math.fround;
  const lut = new Float32Array(256 * c);
  const mean = [0.485, 0.456, 0.406],
    std = [0.229, 0.224, 0.225];
  for (let b = 0; b < c; b++) for (let v = 0; v < 256; v++) lut[b * 256 + v] = f(f(f(v * f(1 / 255)) - f(mean[b])) / f(std[b]));
  const outW = new Float32Array(c * plane),
    outJ = new Float32Array(c * plane);
  return {
    name: "normalise 224x224x3 (table lookup)",
    batch: 10,
    wasm: () => normaliseWasm(pixels, c, plane, lut, outW),
    js: () => normaliseJs(pixels, c, plane, lut, outJ),
    same: () => bytesOf(normaliseWasm(pixels, c, plane, lut, outW)).equals(bytesOf(normaliseJs(pixels, c, plane, lut, outJ))),
  };
}

/** camToGradient's inputs to its second pass for a 28x28 grid to 512x384, computed as it does. */
function blendInputs() {
  const mh = 28,
    columnas = 512,
    filas = 384;
  const across = new Float32Array(mh * columnas).map(() => rnd() * 255);
  const y0 = new Int32Array(filas),
    y1 = new Int32Array(filas),
    dy = new Float64Array(filas);
  const sy = mh / filas;
  for (let y = 0; y < filas; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), mh - 1);
    y0[y] = Math.floor(fy);
    y1[y] = Math.min(y0[y] + 1, mh - 1);
    dy[y] = fy - y0[y];
  }
  return { across, columnas, filas, y0, y1, dy };
}

function blendCase(): Case {
  const { across, columnas, filas, y0, y1, dy } = blendInputs();
  const intoW = new Uint8Array(columnas * filas),
    intoJ = new Uint8Array(columnas * filas);
  return {
    name: "Grad-CAM blend 28x28 -> 512x384",
    batch: 2,
    wasm: () => blendRowsWasm(across, columnas, filas, y0, y1, dy, intoW),
    js: () => blendRowsJs(across, columnas, filas, y0, y1, dy, intoJ),
    same: () =>
      bytesOf(blendRowsWasm(across, columnas, filas, y0, y1, dy, intoW)).equals(
        bytesOf(blendRowsJs(across, columnas, filas, y0, y1, dy, intoJ)),
      ),
  };
}

function jsonCase(): Case {
  const { across, columnas, filas, y0, y1, dy } = blendInputs();
  const map = new GradientMap(columnas, filas, blendRowsJs(across, columnas, filas, y0, y1, dy));
  const outW = Buffer.alloc(map.maxJsonBytes()),
    outJ = Buffer.alloc(map.maxJsonBytes());
  return {
    name: "Grad-CAM map 512x384 as JSON",
    batch: 2,
    wasm: () => map.writeJson(outW, 0),
    js: () => writeJsonJs(map, outJ, 0),
    same: () => {
      const a = map.writeJson(outW, 0),
        b = writeJsonJs(map, outJ, 0);
      return a === b && outW.subarray(0, a).equals(outJ.subarray(0, b));
    },
  };
}

/** ms per call of one batch. */
function sample(fn: () => unknown, batch: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < batch; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e6 / batch;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

const cases = [resizeCase(3), resizeCase(1), normaliseCase(), blendCase(), jsonCase()];
const rows: string[] = [];
for (const k of cases) {
  const same = k.same();
  // Warm: instantiation, JIT tiers.
  for (let i = 0; i < 20; i++) {
    k.wasm();
    k.js();
  }
  const w: number[] = [],
    j: number[] = [];
  for (let s = 0; s < SAMPLES; s++) {
    if (s % 2) {
      w.push(sample(k.wasm, k.batch));
      j.push(sample(k.js, k.batch));
    } else {
      j.push(sample(k.js, k.batch));
      w.push(sample(k.wasm, k.batch));
    }
  }
  w.sort((a, b) => a - b);
  j.sort((a, b) => a - b);
  const mw = quantile(w, 0.5),
    mj = quantile(j, 0.5);
  const spread = (v: number[]) => `${quantile(v, 0.25).toFixed(3)}-${quantile(v, 0.75).toFixed(3)}`;
  rows.push(
    `${k.name.padEnd(44)} ${mw.toFixed(3).padStart(9)} ${spread(w).padStart(13)} ${mj.toFixed(3).padStart(9)} ${spread(j).padStart(13)} ${(mj / mw).toFixed(1).padStart(6)}x  ${same ? "yes" : "NO"}`,
  );
}

console.log(
  [
    `# serving's WebAssembly vs its JavaScript reference (test/oracles/), median ms per call, ${SAMPLES} samples each, alternated, ${new Date().toISOString()}`,
    `# ${os.cpus()[0].model}, ${os.availableParallelism()} cores, node ${process.version}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
    `${"case".padEnd(44)} ${"WASM ms".padStart(9)} ${"(quartiles)".padStart(13)} ${"JS ms".padStart(9)} ${"(quartiles)".padStart(13)} ${"JS/WASM".padStart(7)}  same bytes`,
    ...rows,
  ].join("\n"),
);
