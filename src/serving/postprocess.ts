import type { ServedManifest } from "./manifest.js";
import { blendRowsWasm, mapJsonWasm } from "./maps-wasm.js";

/**
 * From raw ONNX outputs to the seed's answer fields. The rules mirror the pipelines
 * (common/thresholds.py apply_thresholds, detection/decode.py postprocess) so the evaluated model is the served one.
 */

/** prediccion as manifest.schema.json `thresholds` states it. */
export function applyThresholds(problem: ServedManifest["problem"], scores: number[], thresholds?: number[]): number[] {
  const k = scores.length;
  if (problem === "binary") {
    const y = scores[1] >= (thresholds?.[1] ?? 0.5) ? 1 : 0;
    return [1 - y, y];
  }
  if (problem === "multilabel") return scores.map((s, i) => (s >= (thresholds?.[i] ?? 0.5) ? 1 : 0));
  if (problem === "regression") return [scores[0]];
  // multiclass: one-hot of the argmax; the first maximum wins, as numpy's argmax.
  let best = 0;
  for (let i = 1; i < k; i++) if (scores[i] > scores[best]) best = i;
  return scores.map((_, i) => (i === best ? 1 : 0));
}

/** The Grad-CAM output size: the image's own size, scaled down so its longer side is at most maxSide. */
export function camSize(width: number, height: number, maxSide: number): { columnas: number; filas: number } {
  const s = Math.min(1, maxSide / Math.max(width, height));
  return { columnas: Math.max(1, Math.round(width * s)), filas: Math.max(1, Math.round(height * s)) };
}

/**
 * A Grad-CAM map as served: filas x columnas integers 0..255, held as bytes (a 512x384 map is 196,608 values;
 * as JS arrays of numbers it cost more to build and serialise than the inference itself). It serialises to the
 * seed's JSON form, a list of rows of integers, through toJSON (any JSON.stringify) or writeJson (the fast path
 * the predict route uses, see src/http/json-body.ts).
 */
export class GradientMap {
  constructor(
    readonly columnas: number,
    readonly filas: number,
    /** Row-major, filas * columnas values. */
    readonly data: Uint8Array,
  ) {}

  at(y: number, x: number): number {
    return this.data[y * this.columnas + x];
  }

  rows(): number[][] {
    return Array.from({ length: this.filas }, (_, y) => Array.from(this.data.subarray(y * this.columnas, (y + 1) * this.columnas)));
  }

  toJSON(): number[][] {
    return this.rows();
  }

  /** The JSON text of rows() as UTF-8 bytes, written straight from the byte values through a digit table. */
  toJsonBytes(): Buffer {
    const out = Buffer.allocUnsafe(this.maxJsonBytes());
    return out.subarray(0, this.writeJson(out, 0));
  }

  /** An upper bound of the JSON text's length: 3 digits and a comma per value, 2 brackets per row and 2 outside. */
  maxJsonBytes(): number {
    return 2 + this.filas * (2 + 4 * this.columnas);
  }

  /** Writes the JSON text into out at offset o (maxJsonBytes() of room needed); returns the offset after it. */
  writeJson(out: Uint8Array, o: number): number {
    return mapJsonWasm(this.data, this.columnas, this.filas, out, o);
  }
}

/**
 * One class's activation map [h, w] -> filas x columnas integers 0..255: min-max normalised on the model's
 * grid (a flat map is all zeros), bilinearly resized (half-pixel centres, edges clamped), rounded.
 * Resizing is linear, so the normalisation is applied to the interpolated values in the same pass.
 * Letterboxed inputs crop the padded part of the grid first. into (at least filas x columnas bytes): the map's
 * memory, for a caller that reuses it (the worker thread, see MapMemory in image-answer.ts); a new buffer otherwise.
 */
export function camToGradient(
  cam: Float32Array,
  h: number,
  w: number,
  columnas: number,
  filas: number,
  crop?: { w: number; h: number },
  into?: Uint8Array,
): GradientMap {
  const mw = crop ? Math.max(1, Math.min(w, crop.w)) : w;
  const mh = crop ? Math.max(1, Math.min(h, crop.h)) : h;
  let min = Infinity,
    max = -Infinity;
  for (let y = 0; y < mh; y++) {
    for (let x = 0; x < mw; x++) {
      const v = cam[y * w + x];
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  const range = max - min;
  const scale = range > 0 && Number.isFinite(range) ? 255 / range : 0;
  // Column sampling positions, once for all rows.
  const x0 = new Int32Array(columnas),
    x1 = new Int32Array(columnas),
    dx = new Float32Array(columnas);
  const sx = mw / columnas,
    sy = mh / filas;
  for (let x = 0; x < columnas; x++) {
    const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), mw - 1);
    x0[x] = Math.floor(fx);
    x1[x] = Math.min(x0[x] + 1, mw - 1);
    dx[x] = fx - x0[x];
  }
  // Separable: each grid row is interpolated along x once (already normalised to 0..255), then every output
  // row is a blend of two of those. ~4x fewer operations per output value than the direct 2-D formula.
  const across = new Float32Array(mh * columnas);
  for (let gy = 0; gy < mh; gy++) {
    const r = gy * w,
      o = gy * columnas;
    for (let x = 0; x < columnas; x++) {
      const a = cam[r + x0[x]];
      across[o + x] = (a + (cam[r + x1[x]] - a) * dx[x] - min) * scale;
    }
  }
  const y0 = new Int32Array(filas),
    y1 = new Int32Array(filas),
    dy = new Float64Array(filas);
  for (let y = 0; y < filas; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), mh - 1);
    y0[y] = Math.floor(fy);
    y1[y] = Math.min(y0[y] + 1, mh - 1);
    dy[y] = fy - y0[y];
  }
  return new GradientMap(columnas, filas, blendRowsWasm(across, columnas, filas, y0, y1, dy, into));
}

export interface DetectionParams {
  scaleX: number;
  scaleY: number;
  origW: number;
  origH: number;
  scoreThreshold: number;
  nmsIou: number;
  maxDetections: number;
  classAgnostic: boolean;
}

// A top-level function, not a closure inside iou: under tsx (esbuild keepNames) a named closure is re-wrapped by
// __name() on every call, which was the largest cost of detection post-processing in a profile.
function boxArea(b: Float64Array, k: number): number {
  return Math.max(0, b[k * 4 + 2] - b[k * 4]) * Math.max(0, b[k * 4 + 3] - b[k * 4 + 1]);
}

function iou(b: Float64Array, i: number, j: number): number {
  const x1 = Math.max(b[i * 4], b[j * 4]),
    y1 = Math.max(b[i * 4 + 1], b[j * 4 + 1]);
  const x2 = Math.min(b[i * 4 + 2], b[j * 4 + 2]),
    y2 = Math.min(b[i * 4 + 3], b[j * 4 + 3]);
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = boxArea(b, i) + boxArea(b, j) - inter;
  return union > 0 ? inter / Math.max(union, 1e-12) : 0;
}

/** Greedy NMS over candidate indices; stable on ties (lower candidate index first). */
function nms(boxes: Float64Array, scores: number[], idx: number[], iouThr: number): number[] {
  const order = [...idx].sort((a, b) => scores[b] - scores[a] || a - b);
  const keep: number[] = [];
  const dropped = new Set<number>();
  for (let o = 0; o < order.length; o++) {
    const i = order[o];
    if (dropped.has(i)) continue;
    keep.push(i);
    for (let p = o + 1; p < order.length; p++) if (!dropped.has(order[p]) && iou(boxes, i, order[p]) > iouThr) dropped.add(order[p]);
  }
  return keep;
}

/** boxes [M*4] and scores [M*K] of one image -> boxes in original pixels, scores, class indices. */
export function decodeDetections(rawBoxes: Float32Array, rawScores: Float32Array, k: number, p: DetectionParams) {
  const m = rawBoxes.length / 4;
  const candBoxes: number[] = [],
    candScores: number[] = [],
    candClass: number[] = [];
  const b = new Float64Array(m * 4);
  for (let i = 0; i < m; i++) {
    b[i * 4] = Math.min(Math.max(rawBoxes[i * 4] / p.scaleX, 0), p.origW);
    b[i * 4 + 1] = Math.min(Math.max(rawBoxes[i * 4 + 1] / p.scaleY, 0), p.origH);
    b[i * 4 + 2] = Math.min(Math.max(rawBoxes[i * 4 + 2] / p.scaleX, 0), p.origW);
    b[i * 4 + 3] = Math.min(Math.max(rawBoxes[i * 4 + 3] / p.scaleY, 0), p.origH);
  }
  // Candidates in row-major (box, class) order, as numpy.nonzero gives them.
  for (let i = 0; i < m; i++) {
    for (let c = 0; c < k; c++) {
      const s = rawScores[i * k + c];
      if (s >= p.scoreThreshold) {
        candBoxes.push(i);
        candScores.push(s);
        candClass.push(c);
      }
    }
  }
  const cb = new Float64Array(candBoxes.length * 4);
  candBoxes.forEach((bi, n) => cb.set(b.subarray(bi * 4, bi * 4 + 4), n * 4));
  const all = candScores.map((_, i) => i);
  let keep: number[];
  if (p.classAgnostic) keep = nms(cb, candScores, all, p.nmsIou);
  else {
    keep = [];
    for (const c of [...new Set(candClass)].sort((x, y) => x - y))
      keep.push(
        ...nms(
          cb,
          candScores,
          all.filter((i) => candClass[i] === c),
          p.nmsIou,
        ),
      );
  }
  keep.sort((x, y) => candScores[y] - candScores[x] || x - y);
  keep = keep.slice(0, p.maxDetections);
  return {
    boxes: keep.map((i) => Array.from(cb.subarray(i * 4, i * 4 + 4))),
    score: keep.map((i) => candScores[i]),
    classification: keep.map((i) => candClass[i]),
  };
}
