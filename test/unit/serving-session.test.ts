import path from "node:path";
import { describe, expect, it } from "vitest";
import { ModelSession, SessionClosed } from "../../src/serving/session.js";
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
        const a = out[name].data as Float32Array, b = expected[i][name].data as Float32Array;
        a.forEach((v, j) => expect(v).toBeCloseTo(b[j], 5));
      }
    });
    await batched.close();
    await expect(batched.run(inputs[0])).rejects.toBeInstanceOf(SessionClosed);
    await alone.close();
  });
});
