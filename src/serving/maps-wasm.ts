import { MAPS_WASM } from "./wasm/maps.wasm.js";
import { align, growTo, lazyInstance, type WasmMemory } from "./wasm-runtime.js";

/**
 * The per-value loops of Grad-CAM maps (postprocess.ts camToGradient's blend, GradientMap.writeJson) in
 * WebAssembly SIMD (wasm/maps.wat): a 512x384 map is ~200,000 values, each of which both loops touch. Same
 * arithmetic, same bytes as the JavaScript reference in test/oracles/maps-js.ts (test/unit/serving-maps-wasm.test.ts);
 * bench/serve/wasm-vs-js.ts measures both. One instance per thread; its memory grows to the largest map seen and
 * is reused. Where WebAssembly SIMD is missing these throw (wasm-runtime.ts lazyInstance).
 */

interface Exports {
  memory: WasmMemory;
  blend(top: number, bot: number, dy: number, n: number, dst: number): void;
  json(src: number, w: number, h: number, dst: number): number;
}

/** The table maps.wat's json reads at address 0: per byte value its text and a comma (i32), then the lengths. */
const TABLE_BYTES = 1024 + 256;

const wasm = lazyInstance<Exports>(MAPS_WASM, (x) => {
  const mem = new Uint8Array(x.memory.buffer);
  for (let v = 0; v < 256; v++) {
    const text = Buffer.from(`${v},`, "latin1");
    mem.set(text, v * 4);
    mem[1024 + v] = text.length;
  }
});

/**
 * camToGradient's second pass: output row y blends rows y0[y] and y1[y] of `across` (rows of `columnas` values,
 * already normalised to 0..255) by dy[y], rounds and clamps to bytes. Returns filas x columnas bytes: in `into`
 * when given, else in a buffer of their own.
 */
export function blendRowsWasm(
  across: Float32Array,
  columnas: number,
  filas: number,
  y0: Int32Array,
  y1: Int32Array,
  dy: Float64Array,
  into?: Uint8Array,
): Uint8Array {
  const x = wasm();
  const src = TABLE_BYTES + 16;
  const dst = src + align(across.byteLength);
  const mem = growTo(x.memory, dst + align(columnas * filas));
  new Float32Array(mem, src, across.length).set(across);
  const rowBytes = columnas * 4;
  for (let y = 0; y < filas; y++) x.blend(src + y0[y] * rowBytes, src + y1[y] * rowBytes, dy[y], columnas, dst + y * columnas);
  const result = new Uint8Array(mem, dst, columnas * filas);
  if (!into) return result.slice();
  into.set(result);
  return into.subarray(0, result.length);
}

/** GradientMap.writeJson: the JSON text of `data` (filas rows of columnas bytes) into out at o; the offset after it. */
export function mapJsonWasm(data: Uint8Array, columnas: number, filas: number, out: Uint8Array, o: number): number {
  const x = wasm();
  if (columnas < 1 || filas < 1) {
    // No values (maps.wat's json assumes at least one): "[]", or one empty list per row.
    const text = Buffer.from(JSON.stringify(Array.from({ length: Math.max(0, filas) }, () => [])), "latin1");
    out.set(text, o);
    return o + text.length;
  }
  const src = TABLE_BYTES + 16;
  // The text starts at the same offset modulo 8 as its place in `out`: copying into shared memory (the worker's
  // answer slots) goes word by word only when both sides are equally aligned, else byte by byte (twice the time).
  const dst = src + align(data.byteLength) + ((out.byteOffset + o) & 7);
  const mem = growTo(x.memory, dst + align(2 + filas * (2 + 4 * columnas)));
  new Uint8Array(mem, src, data.byteLength).set(data);
  const end = x.json(src, columnas, filas, dst);
  out.set(new Uint8Array(mem, dst, end - dst), o);
  return o + end - dst;
}
