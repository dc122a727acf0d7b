/**
 * The JavaScript reference that the WebAssembly resampling passes (src/serving/pixels-wasm.ts, wasm/pixels.wat)
 * are tested against: Pillow's two convolution passes (libImaging/Resample.c, 8-bit bands) as plain loops,
 * run on the plan production computes (resamplePlan: the same fixed-point taps, the same pass order), so any
 * difference in the bytes is the WebAssembly's. Production never imports this file (serving runs WebAssembly
 * only; test/unit/architecture-imports.test.ts keeps src/ from importing test/): it is used by
 * test/unit/serving-resample-wasm.test.ts and bench/serve/wasm-vs-js.ts. These loops were production's
 * fallback until the supported Node always had WebAssembly SIMD; their arithmetic is unchanged.
 */

import { PRECISION_BITS, resamplePlan, type Coeffs, type Convolution } from "../../src/serving/resample.js";

const ONE = 1 << PRECISION_BITS;
const HALF = 1 << (PRECISION_BITS - 1);
const MAX = ONE * 256; // 1 << PRECISION_BITS << 8

// Sums stay below 2^31 (255 * 2^22 * at most ~1.3 for bicubic overshoot), so a shift is exact here.
const clip8 = (v: number) => (v >= MAX ? 255 : v <= 0 ? 0 : v >> PRECISION_BITS);

function horizontal(src: Uint8Array, w: number, h: number, c: number, outW: number, co: Coeffs): Uint8Array {
  if (c === 3) return horizontalRgb(src, w, h, outW, co);
  const out = new Uint8Array(outW * h * c);
  const { ksize, bounds, kk } = co;
  for (let y = 0; y < h; y++) {
    const row = y * w * c;
    let o = y * outW * c;
    for (let xx = 0; xx < outW; xx++) {
      const n = bounds[xx * 2 + 1],
        k0 = xx * ksize;
      const base = row + bounds[xx * 2] * c;
      for (let b = 0; b < c; b++) {
        let ss = HALF;
        for (let x = 0, p = base + b; x < n; x++, p += c) ss += src[p] * kk[k0 + x];
        out[o++] = clip8(ss);
      }
    }
  }
  return out;
}

/** RGB: one pass over the taps for the three bands, in its own (monomorphic) function so V8 optimises it alone. */
function horizontalRgb(src: Uint8Array, w: number, h: number, outW: number, co: Coeffs): Uint8Array {
  const out = new Uint8Array(outW * h * 3);
  const { ksize, bounds, kk } = co;
  for (let y = 0; y < h; y++) {
    const row = y * w * 3;
    let o = y * outW * 3;
    for (let xx = 0; xx < outW; xx++) {
      const n = bounds[xx * 2 + 1],
        k0 = xx * ksize;
      let s0 = HALF,
        s1 = HALF,
        s2 = HALF;
      for (let x = 0, p = row + bounds[xx * 2] * 3; x < n; x++, p += 3) {
        const k = kk[k0 + x];
        s0 += src[p] * k;
        s1 += src[p + 1] * k;
        s2 += src[p + 2] * k;
      }
      out[o] = s0 >= MAX ? 255 : s0 <= 0 ? 0 : s0 >> PRECISION_BITS;
      out[o + 1] = s1 >= MAX ? 255 : s1 <= 0 ? 0 : s1 >> PRECISION_BITS;
      out[o + 2] = s2 >= MAX ? 255 : s2 <= 0 ? 0 : s2 >> PRECISION_BITS;
      o += 3;
    }
  }
  return out;
}

/**
 * The vertical pass, tap by tap over whole rows: each output row accumulates its source rows in order into an
 * integer row buffer. The same sums as Pillow's per-pixel loop (integer addition is exact and the taps are added
 * in the same order), with sequential memory access instead of a stride per tap: ~3x faster in V8.
 */
function vertical(src: Uint8Array, w: number, c: number, outH: number, co: Coeffs): Uint8Array {
  const out = new Uint8Array(w * outH * c);
  const { ksize, bounds, kk } = co;
  const stride = w * c;
  const acc = new Int32Array(stride);
  for (let yy = 0; yy < outH; yy++) {
    const ymin = bounds[yy * 2],
      n = bounds[yy * 2 + 1],
      k0 = yy * ksize;
    acc.fill(HALF);
    for (let y = 0; y < n; y++) {
      const k = kk[k0 + y];
      const r = (y + ymin) * stride;
      for (let i = 0; i < stride; i++) acc[i] += src[r + i] * k;
    }
    const o = yy * stride;
    for (let i = 0; i < stride; i++) out[o + i] = clip8(acc[i]);
  }
  return out;
}

/** resizeLikePillow's convolution modes with these JavaScript passes in place of the WebAssembly ones. */
export function resizeLikePillowJs(
  src: Uint8Array,
  w: number,
  h: number,
  c: number,
  outW: number,
  outH: number,
  mode: Convolution,
): Uint8Array {
  if (w === outW && h === outH) return src;
  const { hc, vc, verticalFirst } = resamplePlan(w, h, outW, outH, mode);
  if (!hc) return vertical(src, w, c, outH, vc!);
  if (!vc) return horizontal(src, w, h, c, outW, hc);
  if (verticalFirst) return horizontal(vertical(src, w, c, outH, vc), w, outH, c, outW, hc);
  return vertical(horizontal(src, w, h, c, outW, hc), outW, c, outH, vc);
}
