import { describe, expect, it } from "vitest";
import { resizeWasm } from "../../src/serving/pixels-wasm.js";
import { resizeLikePillow } from "../../src/serving/resample.js";
import { normalise, resizeToSpec } from "../../src/serving/tensor.js";
import { lazyInstance } from "../../src/serving/wasm-runtime.js";
import { normaliseJs } from "../oracles/normalise-js.js";
import { resizeLikePillowJs } from "../oracles/resample-js.js";

// The WebAssembly passes (src/serving/wasm/pixels.wat), the only ones serving runs, must give the bytes of the
// JavaScript passes in test/oracles/resample-js.ts (on the same taps and pass order), on every shape: shrinking
// and enlarging, one axis or both, either pass order, grey and RGB, extreme values (clamping), sizes that are not
// a multiple of the vector width. The Pillow parity test (serving-preprocess.test.ts) checks the result against
// Pillow itself.
describe("resampling in WebAssembly", () => {
  it("runs here (Node's WebAssembly has SIMD), so serving uses it", () => {
    expect(() => resizeWasm(new Uint8Array(4 * 3 * 3), 4, 3, 3, 2, 2, null, null, false)).not.toThrow();
  });

  it("fails saying why, on every call, where a module cannot be instantiated (no SIMD: an unsupported Node)", () => {
    const broken = lazyInstance<object>(Buffer.from("not WebAssembly").toString("base64"));
    expect(broken).toThrow(/Builder needs WebAssembly SIMD \(Node >= 20\.19\)/);
    expect(broken).toThrow(/Builder needs WebAssembly SIMD/);
  });

  it("gives the JavaScript passes' bytes on 500 random shapes", () => {
    let seed = 12345;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const int = (n: number) => 1 + Math.floor(rnd() * n);
    let differing = 0;
    for (let t = 0; t < 500; t++) {
      const w = int(300),
        h = int(240),
        c = rnd() < 0.3 ? 1 : 3;
      // A third keep one axis (one pass only), the rest resize both.
      const outW = rnd() < 0.15 ? w : int(260),
        outH = rnd() < 0.15 ? h : int(260);
      const mode = rnd() < 0.5 ? "bilinear" : "bicubic";
      const src = new Uint8Array(w * h * c);
      for (let i = 0; i < src.length; i++) src[i] = rnd() < 0.15 ? (rnd() < 0.5 ? 0 : 255) : Math.floor(rnd() * 256);
      const fast = resizeLikePillow(src, w, h, c, outW, outH, mode);
      const ref = resizeLikePillowJs(src, w, h, c, outW, outH, mode);
      expect(fast.length).toBe(outW * outH * c);
      if (!Buffer.from(fast).equals(Buffer.from(ref))) differing++;
    }
    expect(differing).toBe(0);
  });

  it("handles a large photo after small ones (its memory grows) and small ones after it", () => {
    const big = new Uint8Array(2000 * 1500 * 3).map((_, i) => (i * 7919) % 256);
    for (const [w, h, src] of [
      [20, 10, big.subarray(0, 600)],
      [2000, 1500, big],
      [31, 17, big.subarray(0, 31 * 17 * 3)],
    ] as const) {
      expect(
        Buffer.from(resizeLikePillow(src, w, h, 3, 224, 200, "bilinear")).equals(
          Buffer.from(resizeLikePillowJs(src, w, h, 3, 224, 200, "bilinear")),
        ),
      ).toBe(true);
    }
  });

  it("normalises to the JavaScript loop's floats, from its own memory (a transient resize) or from anywhere", () => {
    for (const c of [1, 3] as const) {
      const spec = {
        width: 97,
        height: 61,
        channels: c,
        resize: "stretch" as const,
        interpolation: "bilinear" as const,
        scale: 1 / 255,
        mean: [0.485, 0.456, 0.406].slice(0, c),
        std: [0.229, 0.224, 0.225].slice(0, c),
      };
      const img = { pixels: new Uint8Array(300 * 200 * c).map((_, i) => (i * 2654435761) % 256), width: 300, height: 200, channels: c };
      const transient = resizeToSpec(img, spec, { into: new Uint8Array(97 * 61 * c) }).pixels; // a view of the WebAssembly memory
      const copied = transient.slice();
      const got = [normalise(transient, spec), normalise(copied, spec)];
      const f = Math.fround,
        lut = new Float32Array(256 * c);
      for (let b = 0; b < c; b++)
        for (let v = 0; v < 256; v++) lut[b * 256 + v] = f(f(f(v * f(spec.scale)) - f(spec.mean[b])) / f(spec.std[b]));
      const want = normaliseJs(copied, c, 97 * 61, lut, new Float32Array(97 * 61 * c));
      for (const g of got) expect(Buffer.from(g.buffer).equals(Buffer.from(want.buffer))).toBe(true);
    }
  });
});
