import { PIXELS_WASM } from "./wasm/pixels.wasm.js";
import { align, growTo, lazyInstance, type WasmMemory } from "./wasm-runtime.js";

/**
 * The per-pixel loops of preprocessing in WebAssembly SIMD (wasm/pixels.wat): resample.ts's two convolution
 * passes and tensor.ts's normalisation. The passes compute the same integer sums in the same order as the
 * JavaScript reference in test/oracles/resample-js.ts, so the same bytes (test/unit/serving-resample-wasm.test.ts);
 * bench/serve/wasm-vs-js.ts measures both. One instance per thread (each worker thread compiles its own, ~1 KB);
 * its memory grows to the largest image seen and is reused. Where WebAssembly SIMD is missing these throw
 * (wasm-runtime.ts lazyInstance).
 */

/** Precomputed filter taps for one axis (resample.ts precompute): per output position its first tap and count, and ksize fixed-point weights. */
export interface Coeffs {
  ksize: number;
  bounds: Int32Array; // xmin, count per output
  kk: Int32Array; // fixed point weights, ksize per output
}

interface Exports {
  memory: WasmMemory;
  h3: (src: number, w: number, h: number, outW: number, bounds: number, kk: number, ksize: number, dst: number) => void;
  h1: (src: number, w: number, h: number, outW: number, bounds: number, kk: number, ksize: number, dst: number) => void;
  v(src: number, stride: number, outH: number, bounds: number, kk: number, ksize: number, dst: number, acc: number): void;
  norm(px: number, c: number, plane: number, lut: number, out: number): void;
}

const wasm = lazyInstance<Exports>(PIXELS_WASM);

/** Memory regions, in bytes from 0, for one resize. */
function layout(sizes: number[]): { offsets: number[]; total: number } {
  const offsets: number[] = [];
  let at = 0;
  for (const s of sizes) {
    offsets.push(at);
    at += align(s);
  }
  return { offsets, total: at };
}

/**
 * src (HWC, c = 1 or 3) resized to outW x outH by the given passes: hc horizontal, vc vertical (either may be
 * null when that axis keeps its size), verticalFirst as resample.ts decided. transient: the result is a view of
 * this thread's WebAssembly memory, valid until the next call (no copy; for a caller that uses it at once).
 */
export function resizeWasm(
  src: Uint8Array,
  w: number,
  h: number,
  c: number,
  outW: number,
  outH: number,
  hc: Coeffs | null,
  vc: Coeffs | null,
  verticalFirst: boolean,
  transient = false,
): Uint8Array {
  if (c !== 1 && c !== 3) throw new RangeError(`resizeWasm: ${c} channels (1 or 3 only)`);
  const x = wasm();
  const midW = hc && !verticalFirst ? outW : w;
  const midH = hc && !verticalFirst ? h : outH;
  const widest = Math.max(w, outW) * c;
  const { offsets, total } = layout([
    w * h * c, // 0 source
    midW * midH * c, // 1 after the first pass
    outW * outH * c, // 2 result
    hc ? hc.bounds.byteLength : 0, // 3
    hc ? hc.kk.byteLength : 0, // 4
    vc ? vc.bounds.byteLength : 0, // 5
    vc ? vc.kk.byteLength : 0, // 6
    (widest + 8) * 4, // 7 the vertical pass's row of sums
  ]);
  const bytes = new Uint8Array(growTo(x.memory, total));
  bytes.set(src, offsets[0]);
  if (hc) {
    bytes.set(new Uint8Array(hc.bounds.buffer, hc.bounds.byteOffset, hc.bounds.byteLength), offsets[3]);
    bytes.set(new Uint8Array(hc.kk.buffer, hc.kk.byteOffset, hc.kk.byteLength), offsets[4]);
  }
  if (vc) {
    bytes.set(new Uint8Array(vc.bounds.buffer, vc.bounds.byteOffset, vc.bounds.byteLength), offsets[5]);
    bytes.set(new Uint8Array(vc.kk.buffer, vc.kk.byteOffset, vc.kk.byteLength), offsets[6]);
  }
  const horizontal = (from: number, inW: number, rows: number, to: number) =>
    (c === 3 ? x.h3 : x.h1)(from, inW, rows, outW, offsets[3], offsets[4], hc!.ksize, to);
  const vertical = (from: number, rowW: number, to: number) => x.v(from, rowW * c, outH, offsets[5], offsets[6], vc!.ksize, to, offsets[7]);
  if (hc && vc) {
    if (verticalFirst) {
      vertical(offsets[0], w, offsets[1]);
      horizontal(offsets[1], w, outH, offsets[2]);
    } else {
      horizontal(offsets[0], w, h, offsets[1]);
      vertical(offsets[1], outW, offsets[2]);
    }
  } else if (hc) horizontal(offsets[0], w, h, offsets[2]);
  else if (vc) vertical(offsets[0], w, offsets[2]);
  else return src;
  const result = new Uint8Array(bytes.buffer, offsets[2], outW * outH * c);
  return transient ? result : result.slice();
}

/**
 * tensor.ts normalise's loop (out[b][i] = lut[b][pixels[i * c + b]]) in WebAssembly; returns out. pixels may be
 * a view of this thread's WebAssembly memory (a transient resize result): it is then read where it is.
 */
export function normaliseWasm(pixels: Uint8Array, c: number, plane: number, lut: Float32Array, out: Float32Array): Float32Array {
  const x = wasm();
  let inside = pixels.buffer === x.memory.buffer;
  let base = inside ? align(pixels.byteOffset + pixels.byteLength) : 0;
  const { offsets, total } = layout([pixels.byteLength, lut.byteLength, out.byteLength]);
  if (x.memory.buffer.byteLength < base + total) {
    if (inside) {
      // Growing detaches the views of the old memory: take the pixels out first (once; the memory stays grown).
      pixels = pixels.slice();
      inside = false;
      base = 0;
    }
  }
  const mem = growTo(x.memory, base + total);
  const px = inside ? pixels.byteOffset : base + offsets[0];
  if (!inside) new Uint8Array(mem).set(pixels, px);
  new Uint8Array(mem).set(new Uint8Array(lut.buffer, lut.byteOffset, lut.byteLength), base + offsets[1]);
  x.norm(px, c, plane, base + offsets[1], base + offsets[2]);
  out.set(new Float32Array(mem, base + offsets[2], out.length));
  return out;
}
