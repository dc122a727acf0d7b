/**
 * The JavaScript reference that the WebAssembly loops of Grad-CAM maps (src/serving/maps-wasm.ts, wasm/maps.wat)
 * are tested against: camToGradient's second pass (the blend of two interpolated rows per output row, rounded and
 * clamped to bytes) and GradientMap.writeJson's JSON text, as plain loops. Production never imports this file
 * (serving runs WebAssembly only; test/unit/architecture-imports.test.ts keeps src/ from importing test/): it is
 * used by test/unit/serving-maps-wasm.test.ts and bench/serve/wasm-vs-js.ts. These loops were production's
 * fallback until the supported Node always had WebAssembly SIMD; their arithmetic is unchanged.
 */

import type { GradientMap } from "../../src/serving/postprocess.js";

/** camToGradient's second pass: row y blends rows y0[y], y1[y] of `across`. Into `into` when given. */
export function blendRowsJs(
  across: Float32Array,
  columnas: number,
  filas: number,
  y0: Int32Array,
  y1: Int32Array,
  dy: Float64Array,
  into?: Uint8Array,
): Uint8Array {
  const out = into?.subarray(0, columnas * filas) ?? new Uint8Array(columnas * filas);
  for (let y = 0; y < filas; y++) {
    const r0 = y0[y] * columnas,
      r1 = y1[y] * columnas,
      row = y * columnas,
      d = dy[y];
    for (let x = 0; x < columnas; x++) {
      const top = across[r0 + x];
      // Math.round for the values that occur (0..255 up to float error), without its call: floor(v + 0.5).
      const v = (top + (across[r1 + x] - top) * d + 0.5) | 0;
      out[row + x] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  return out;
}

/** GradientMap.writeJson's text of `map` into out at offset o (map.maxJsonBytes() of room); the offset after it. */
export function writeJsonJs(map: GradientMap, out: Uint8Array, o: number): number {
  const { columnas: w, filas: h, data } = map;
  out[o++] = 0x5b; // [
  for (let y = 0; y < h; y++) {
    if (y) out[o++] = 0x2c; // ,
    out[o++] = 0x5b;
    const row = y * w;
    for (let x = 0; x < w; x++) {
      if (x) out[o++] = 0x2c;
      const v = data[row + x];
      if (v >= 100) {
        out[o++] = 0x30 + ((v / 100) | 0);
        out[o++] = 0x30 + (((v / 10) | 0) % 10);
        out[o++] = 0x30 + (v % 10);
      } else if (v >= 10) {
        out[o++] = 0x30 + ((v / 10) | 0);
        out[o++] = 0x30 + (v % 10);
      } else out[o++] = 0x30 + v;
    }
    out[o++] = 0x5d; // ]
  }
  out[o++] = 0x5d;
  return o;
}
