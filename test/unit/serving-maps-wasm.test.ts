import { describe, expect, it } from "vitest";
import { blendRowsWasm, mapJsonWasm } from "../../src/serving/maps-wasm.js";
import { camToGradient, GradientMap } from "../../src/serving/postprocess.js";
import { blendRowsJs, writeJsonJs } from "../oracles/maps-js.js";

// The WebAssembly loops of Grad-CAM maps (src/serving/wasm/maps.wat), the only ones serving runs, must give the
// bytes of the JavaScript loops in test/oracles/maps-js.ts: on every shape (odd widths that are not a multiple of
// the vector width, one row, one column), on values outside 0..255 and near the rounding edges, and on maps of
// every digit count. serving-postprocess.test.ts and the peer comparison check the maps against the pipelines' numpy.
let seed = 4242;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const int = (n: number) => 1 + Math.floor(rnd() * n);

describe("Grad-CAM maps in WebAssembly", () => {
  it("runs here (Node's WebAssembly has SIMD), so serving uses it", () => {
    expect(() => blendRowsWasm(new Float32Array(4), 2, 2, Int32Array.of(0, 1), Int32Array.of(1, 1), Float64Array.of(0.5, 0))).not.toThrow();
    expect(mapJsonWasm(Uint8Array.of(1, 2), 2, 1, new Uint8Array(16), 0)).toBe(7);
  });

  it("blends rows to the JavaScript's bytes on 300 random shapes", () => {
    let differing = 0;
    for (let t = 0; t < 300; t++) {
      const mh = int(30),
        columnas = int(600),
        filas = int(500);
      // Mostly 0..255 with float error, some far outside (clamped), some at .5 boundaries and NaN.
      const across = new Float32Array(mh * columnas).map(() => {
        const r = rnd();
        if (r < 0.05) return (rnd() - 0.5) * 2000;
        if (r < 0.1) return Math.floor(rnd() * 256) + 0.5;
        if (r < 0.11) return Number.NaN;
        return rnd() * 256 - 0.3;
      });
      const y0 = new Int32Array(filas),
        y1 = new Int32Array(filas),
        dy = new Float64Array(filas);
      for (let y = 0; y < filas; y++) {
        y0[y] = Math.floor(rnd() * mh);
        y1[y] = Math.min(y0[y] + 1, mh - 1);
        dy[y] = rnd() < 0.1 ? 0 : rnd();
      }
      const fast = blendRowsWasm(across, columnas, filas, y0, y1, dy)!;
      if (!Buffer.from(fast).equals(Buffer.from(blendRowsJs(across, columnas, filas, y0, y1, dy)))) differing++;
    }
    expect(differing).toBe(0);
  });

  it("writes the JavaScript's JSON text, at an offset, for maps of every size and digit count", () => {
    for (let t = 0; t < 200; t++) {
      const columnas = t === 0 ? 1 : int(520),
        filas = t === 1 ? 1 : int(400);
      const digits = t % 4; // 0: any value; 1, 2, 3: values of that many digits only
      const lo = [0, 0, 10, 100][digits],
        hi = [256, 10, 100, 256][digits];
      const data = new Uint8Array(columnas * filas).map(() => lo + Math.floor(rnd() * (hi - lo)));
      const map = new GradientMap(columnas, filas, data);
      const at = int(9);
      const a = Buffer.alloc(at + map.maxJsonBytes()),
        b = Buffer.alloc(at + map.maxJsonBytes());
      const endFast = map.writeJson(a, at),
        endJs = writeJsonJs(map, b, at);
      expect(endFast).toBe(endJs);
      expect(a.subarray(0, endFast).equals(b.subarray(0, endJs))).toBe(true);
      if (t < 4) expect(JSON.parse(a.subarray(at, endFast).toString())).toEqual(map.rows());
    }
  });

  it("camToGradient's maps read back as their rows, small maps after large ones (the memory is reused)", () => {
    for (const [h, w, cols, rows] of [
      [28, 28, 512, 384],
      [7, 7, 512, 384],
      [3, 5, 17, 9],
      [28, 28, 1, 1],
      [1, 1, 40, 30],
    ]) {
      const cam = new Float32Array(h * w).map(() => rnd() * 8 - 2);
      const map = camToGradient(cam, h, w, cols, rows);
      expect(map.data.length).toBe(cols * rows);
      expect(JSON.parse(map.toJsonBytes().toString())).toEqual(map.rows());
    }
  });

  it("writes the JavaScript's text for a map with no values (no rows, or a row of no columns)", () => {
    for (const [columnas, filas] of [
      [0, 0],
      [5, 0],
      [0, 1],
    ]) {
      const map = new GradientMap(columnas, filas, new Uint8Array(0));
      const a = Buffer.alloc(4 + map.maxJsonBytes()),
        b = Buffer.alloc(4 + map.maxJsonBytes());
      const end = map.writeJson(a, 4);
      expect(end).toBe(writeJsonJs(map, b, 4));
      expect(a.equals(b)).toBe(true);
    }
  });
});
