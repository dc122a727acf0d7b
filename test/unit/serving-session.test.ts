import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_BATCH, ModelSession, SessionClosed } from "../../src/serving/session.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

// Opportunistic batching must give every request exactly the outputs it would get alone.
describe.skipIf(!haveFixturePython)("ModelSession batching", () => {
  it("batches concurrent runs and splits the outputs back to their requests", async () => {
    const fx = servingFixtures();
    const file = path.join(fx.modelDir("vision_binary"), "model.onnx");
    const shape = [3, 32, 40];
    const alone = await ModelSession.load(file, "x", shape, { intraOpThreads: 1, maxBatch: 1 });
    const batched = await ModelSession.load(file, "x", shape, { intraOpThreads: 1, maxBatch: 8 });
    expect(batched.batchable).toBe(true);
    const inputs = Array.from({ length: 7 }, (_, i) => Float32Array.from({ length: 3 * 32 * 40 }, (_, j) => Math.sin(i * 7 + j * 0.01)));
    const expected: Array<Awaited<ReturnType<ModelSession["run"]>>> = [];
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
    await expect(batched.run(inputs[0])).rejects.toBeInstanceOf(SessionClosed);
    await alone.close();
  });

  it("batches by the provider that loaded the model, not by the presence of a GPU device", async () => {
    const file = path.join(servingFixtures().modelDir("vision_binary"), "model.onnx");
    // CUDA asked for: it runs only where ONNX Runtime's CUDA provider library is installed beside the binding
    // (npm's onnxruntime-node ships the CPU provider only); elsewhere the model loads on CPU, unbatched.
    const binding = path.dirname(createRequire(import.meta.url).resolve("onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node"));
    const cudaInstalled = fs.existsSync(path.join(binding, "libonnxruntime_providers_cuda.so"));
    const tried = await ModelSession.load(file, "x", [3, 32, 40], { intraOpThreads: 1, cuda: true });
    expect(tried.provider).toBe(cudaInstalled && fs.existsSync("/dev/nvidia0") ? "cuda" : "cpu");
    expect(tried.maxBatch).toBe(DEFAULT_MAX_BATCH[tried.provider]);
    expect(tried.batchable).toBe(tried.maxBatch > 1);
    const cpu = await ModelSession.load(file, "x", [3, 32, 40], { intraOpThreads: 1 });
    expect([cpu.provider, cpu.maxBatch, cpu.batchable]).toEqual(["cpu", 1, false]);
    const configured = await ModelSession.load(file, "x", [3, 32, 40], { intraOpThreads: 1, maxBatch: 4 });
    expect([configured.provider, configured.maxBatch]).toEqual(["cpu", 4]);
    await Promise.all([tried.close(), cpu.close(), configured.close()]);
  });
});
