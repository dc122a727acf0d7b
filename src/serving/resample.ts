/**
 * Image resizing after Pillow's Image.resize (libImaging/Resample.c), so that the tensor served matches the
 * tensor the pipeline trained on. sharp/libvips resize differently (other kernels, shrink-on-load, no
 * intermediate rounding), which would shift pixels by a few levels.
 *
 * Convolution resampling: for each output pixel the filter (triangle for bilinear, Keys a=-0.5 for bicubic)
 * is stretched by the downscale factor, weights normalised, turned into 22-bit fixed point; two passes, one per
 * axis, with an 8-bit rounded intermediate between them. Nearest uses Pillow's affine sampling.
 * Pixels are interleaved uint8 (HWC) with `channels` bands.
 *
 * What is tested against Pillow (test/unit/serving-preprocess.test.ts, the pipelines' own preprocessing of the
 * fixture images): every pixel within one grey level, and at least 85% of the cases byte for byte. Not every
 * case is exact because Pillow 13's choice of which pass runs first, when both axes change, is not documented:
 * resamplePlan's rule is a cost model fitted to it (it agrees on ~97% of random sizes), and where it picks the
 * other order the 8-bit intermediate rounds differently. The one-level margin also covers JPEG fixtures decoded
 * by two libraries (libjpeg-turbo, mozjpeg) that may round differently.
 */

import { resizeWasm, type Coeffs } from "./pixels-wasm.js";

export type { Coeffs } from "./pixels-wasm.js";

export type Interpolation = "bilinear" | "nearest" | "bicubic";
/** The modes that resample by convolution (filter taps), as opposed to nearest's sampling. */
export type Convolution = Exclude<Interpolation, "nearest">;

/** The fixed point of the filter weights (Pillow's PRECISION_BITS): a weight of 1 is 1 << PRECISION_BITS. */
export const PRECISION_BITS = 32 - 8 - 2;
const ONE = 1 << PRECISION_BITS;

const filters = {
  bilinear: { support: 1, f: (x: number) => ((x = Math.abs(x)) < 1 ? 1 - x : 0) },
  bicubic: {
    support: 2,
    f: (x: number) => {
      const a = -0.5;
      x = Math.abs(x);
      if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
      if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
      return 0;
    },
  },
};

function precompute(inSize: number, outSize: number, filter: { support: number; f: (x: number) => number }): Coeffs {
  const scale = inSize / outSize;
  const filterscale = Math.max(scale, 1);
  const support = filter.support * filterscale;
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kk = new Int32Array(outSize * ksize);
  const w = new Float64Array(ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    const ss = 1 / filterscale;
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0;
    for (let x = 0; x < xmax; x++) {
      w[x] = filter.f((x + xmin - center + 0.5) * ss);
      ww += w[x];
    }
    for (let x = 0; x < xmax; x++) {
      const k = ww !== 0 ? w[x] / ww : w[x];
      // C's (int) cast truncates toward zero.
      kk[xx * ksize + x] = Math.trunc(k < 0 ? -0.5 + k * ONE : 0.5 + k * ONE);
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = xmax;
  }
  return { ksize, bounds, kk };
}

function nearest(src: Uint8Array, w: number, h: number, c: number, outW: number, outH: number): Uint8Array {
  const out = new Uint8Array(outW * outH * c);
  const sx = w / outW,
    sy = h / outH;
  for (let y = 0; y < outH; y++) {
    const iy = Math.min(h - 1, Math.trunc((y + 0.5) * sy));
    for (let x = 0; x < outW; x++) {
      const ix = Math.min(w - 1, Math.trunc((x + 0.5) * sx));
      for (let b = 0; b < c; b++) out[(y * outW + x) * c + b] = src[(iy * w + ix) * c + b];
    }
  }
  return out;
}

/**
 * Resizes interleaved uint8 pixels like Pillow's Image.resize((outW, outH), resample). The convolution passes
 * run in WebAssembly SIMD (pixels-wasm.ts) on resamplePlan's coefficients and pass order; nearest runs here.
 * transient: the result may be a view of memory that the next resize on this thread overwrites (see pixels-wasm.ts).
 */
export function resizeLikePillow(
  src: Uint8Array,
  w: number,
  h: number,
  c: number,
  outW: number,
  outH: number,
  mode: Interpolation,
  transient = false,
): Uint8Array {
  if (w === outW && h === outH) return src;
  if (mode === "nearest") return nearest(src, w, h, c, outW, outH);
  const { hc, vc, verticalFirst } = resamplePlan(w, h, outW, outH, mode);
  return resizeWasm(src, w, h, c, outW, outH, hc, vc, verticalFirst, transient);
}

/** What a convolution resize computes, whoever runs its passes: the taps per axis and the order of the passes. */
export interface ResamplePlan {
  /** The horizontal pass's taps; null when the width stays. */
  hc: Coeffs | null;
  /** The vertical pass's taps; null when the height stays. */
  vc: Coeffs | null;
  /** Both passes: the vertical one runs first. */
  verticalFirst: boolean;
}

/**
 * The plan of resizing w x h to outW x outH: resizeLikePillow hands it to the WebAssembly passes, and the tests'
 * JavaScript reference (test/oracles/resample-js.ts) runs its own passes on the same plan.
 */
export function resamplePlan(w: number, h: number, outW: number, outH: number, mode: Convolution): ResamplePlan {
  const filter = filters[mode];
  const hc = outW !== w ? precompute(w, outW, filter) : null;
  const vc = outH !== h ? precompute(h, outH, filter) : null;
  // Both axes: the 8-bit intermediate makes the pass order visible in the result. Pillow 13 runs the
  // vertical pass first in some shrinking cases; its exact rule is not documented, and this cost model
  // (fitted on random sizes against Pillow 13.0: it agrees on ~97% of them) picks the same order in most.
  return { hc, vc, verticalFirst: !!hc && !!vc && verticalFirst(w, h, outW, outH, hc, vc) };
}

function taps(co: Coeffs): number {
  let t = 0;
  for (let i = 1; i < co.bounds.length; i += 2) t += co.bounds[i];
  return t;
}

function verticalFirst(w: number, h: number, outW: number, outH: number, hc: Coeffs, vc: Coeffs): boolean {
  if (outH >= h) return false;
  const tx = taps(hc),
    ty = taps(vc);
  return 0.5 * tx * h + ty * outW > ty * w + 0.5 * tx * outH;
}
