/**
 * The JavaScript reference that the WebAssembly normalisation loop (src/serving/pixels-wasm.ts normaliseWasm,
 * wasm/pixels.wat norm) is tested against: uint8 HWC pixels to float32 CHW through the per-channel table that
 * tensor.ts normalise builds, out[b][i] = lut[b][pixels[i * c + b]]. Production never imports this file (serving
 * runs WebAssembly only; test/unit/architecture-imports.test.ts keeps src/ from importing test/): it is used by
 * test/unit/serving-resample-wasm.test.ts and bench/serve/wasm-vs-js.ts. This loop was production's fallback
 * until the supported Node always had WebAssembly SIMD; its arithmetic is unchanged.
 */

export function normaliseJs(pixels: Uint8Array, c: number, plane: number, lut: Float32Array, out: Float32Array): Float32Array {
  for (let b = 0; b < c; b++) {
    const o = b * plane,
      l = b * 256;
    for (let i = 0, p = b; i < plane; i++, p += c) out[o + i] = lut[l + pixels[p]];
  }
  return out;
}
