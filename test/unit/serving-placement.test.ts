import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PredictorClosed } from "../../src/serving/errors.js";
import { checkManifest, type ServedManifest } from "../../src/serving/manifest.js";
import { choosePlacement, openPredictor } from "../../src/serving/placement.js";
import type { BatchingPredictor } from "../../src/serving/placement-batching.js";
import { DEFAULT_MAX_BATCH, type Outputs } from "../../src/serving/predictor.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

const manifestOf = (dir: string) => checkManifest(JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")));

// Opportunistic batching must give every request exactly the outputs it would get alone.
describe.skipIf(!haveFixturePython)("the batching placement", () => {
  it("batches concurrent runs and splits the outputs back to their requests", async () => {
    const dir = servingFixtures().modelDir("vision_binary");
    const file = path.join(dir, "model.onnx");
    const m = manifestOf(dir);
    const alone = await openPredictor(file, m, { intraOpThreads: 1, maxBatch: 1 });
    const batched = (await openPredictor(file, m, { intraOpThreads: 1, maxBatch: 8 })) as BatchingPredictor;
    expect(batched.placement).toBe("batching");
    const inputs = Array.from({ length: 7 }, (_, i) => Float32Array.from({ length: 3 * 32 * 40 }, (_, j) => Math.sin(i * 7 + j * 0.01)));
    const expected: Outputs[] = [];
    for (const x of inputs) expected.push(await alone.run(x));
    const got = await Promise.all(inputs.map((x) => batched.run(x)));
    expect(Math.max(...batched.batchSizes)).toBeGreaterThan(1);
    got.forEach((out, i) => {
      for (const name of ["scores", "cam"]) {
        expect(out[name].dims).toEqual(expected[i][name].dims);
        const a = out[name].data as Float32Array,
          b = expected[i][name].data as Float32Array;
        a.forEach((v, j) => expect(v).toBeCloseTo(b[j], 5));
      }
    });
    await batched.close();
    await expect(batched.run(inputs[0])).rejects.toBeInstanceOf(PredictorClosed);
    await alone.close();
  });

  it("batches by the provider that loaded the model, not by the presence of a GPU device", async () => {
    const dir = servingFixtures().modelDir("vision_binary");
    const file = path.join(dir, "model.onnx");
    const m = manifestOf(dir);
    // CUDA asked for: it runs only where ONNX Runtime's CUDA provider library is installed beside the binding
    // (npm's onnxruntime-node ships the CPU provider only); elsewhere the model loads on CPU, unbatched.
    const binding = path.dirname(createRequire(import.meta.url).resolve("onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node"));
    const cudaInstalled = fs.existsSync(path.join(binding, "libonnxruntime_providers_cuda.so"));
    const tried = await openPredictor(file, m, { intraOpThreads: 1, cuda: true });
    expect(tried.provider).toBe(cudaInstalled && fs.existsSync("/dev/nvidia0") ? "cuda" : "cpu");
    expect(tried.maxBatch).toBe(DEFAULT_MAX_BATCH[tried.provider]);
    expect(tried.placement === "batching").toBe(tried.maxBatch > 1);
    const cpu = await openPredictor(file, m, { intraOpThreads: 1 });
    expect([cpu.provider, cpu.maxBatch, cpu.placement === "batching"]).toEqual(["cpu", 1, false]);
    const configured = await openPredictor(file, m, { intraOpThreads: 1, maxBatch: 4 });
    expect([configured.provider, configured.maxBatch]).toEqual(["cpu", 4]);
    await Promise.all([tried.close(), cpu.close(), configured.close()]);
  });
});

// The placement rule on its own: every kind of model, every provider, every setting.
describe("choosePlacement", () => {
  const manifest = (kind: ServedManifest["kind"]) =>
    ({
      kind,
      input: kind === "tabular" ? { name: "x", columns: [{ name: "a" }] } : { name: "x", image: { width: 8, height: 8, channels: 1 } },
    }) as ServedManifest;
  const facts = { fitsInline: false, provider: "cpu" as const, dynamicBatch: true };

  it("keeps a tabular model that fits on the event loop, whatever the provider or batch setting", () => {
    expect(choosePlacement(manifest("tabular"), { ...facts, fitsInline: true }, { maxBatch: 8 })).toEqual({ kind: "inline" });
    expect(choosePlacement(manifest("tabular"), { ...facts, fitsInline: true, provider: "cuda" }, {})).toEqual({ kind: "inline" });
  });

  it("runs image models whole on one thread per core (at most four, or as configured) on CPU, a larger tabular model on one", () => {
    const perCore = Math.max(1, Math.min(4, os.availableParallelism()));
    expect(choosePlacement(manifest("vision_classification"), facts, {})).toEqual({ kind: "threads", threads: perCore });
    expect(choosePlacement(manifest("vision_classification"), facts, { threads: 3 })).toEqual({ kind: "threads", threads: 3 });
    expect(choosePlacement(manifest("tabular"), facts, { threads: 3 })).toEqual({ kind: "threads", threads: 1 });
  });

  it("batches on CUDA or when SERVING_MAX_BATCH asks, only a graph with a dynamic batch dimension, never detection", () => {
    expect(choosePlacement(manifest("vision_classification"), { ...facts, provider: "cuda" }, {})).toEqual({
      kind: "batching",
      maxBatch: 16,
    });
    expect(choosePlacement(manifest("tabular"), facts, { maxBatch: 4 })).toEqual({ kind: "batching", maxBatch: 4 });
    expect(choosePlacement(manifest("vision_classification"), { ...facts, dynamicBatch: false }, { maxBatch: 4 })).toEqual({
      kind: "threads",
      threads: expect.any(Number),
    });
    expect(choosePlacement(manifest("detection"), { ...facts, provider: "cuda" }, {})).toEqual({ kind: "threads", threads: 1 });
    expect(choosePlacement(manifest("vision_classification"), { ...facts, provider: "cuda" }, { maxBatch: 1 })).toEqual({
      kind: "threads",
      threads: 1,
    });
  });
});
