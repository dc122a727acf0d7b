import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkManifest } from "../../src/serving/manifest.js";
import { openPredictor } from "../../src/serving/placement.js";
import { InlinePredictor } from "../../src/serving/placement-inline.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

// A tiny tabular model runs on the event loop; it must answer exactly what the worker thread answers, and a
// model over either bound must not be kept there.
describe.skipIf(!haveFixturePython)("tabular models on the event loop", () => {
  it("keeps a tiny model on the event loop with the worker thread's outputs, and refuses one over the bounds", async () => {
    const dir = servingFixtures().modelDir("tabular_multiclass");
    const file = path.join(dir, "model.onnx");
    const manifest = checkManifest(JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")));
    const onLoop = await InlinePredictor.open(file, "x", [4]);
    expect(onLoop).toBeDefined();
    const placed = await openPredictor(file, manifest, { intraOpThreads: 1 });
    expect(placed.placement).toBe("inline");
    await placed.close();
    const onThread = await openPredictor(file, manifest, { intraOpThreads: 1, inline: false });
    expect([onLoop!.threads, onThread.threads]).toEqual([0, 1]);
    expect(onLoop!.outputNames).toEqual(onThread.outputNames);
    for (const row of [
      [63, 1, 27.5, 2],
      [18, 0, 14, 0],
      [90, 1, 60, 1],
    ]) {
      const [a, b] = await Promise.all([onLoop!.run(Float32Array.from(row)), onThread.run(Float32Array.from(row))]);
      expect(a.scores.dims).toEqual(b.scores.dims);
      expect(Array.from(a.scores.data as Float32Array)).toEqual(Array.from(b.scores.data as Float32Array));
    }
    await Promise.all([onLoop!.close(), onThread.close()]);
    await expect(InlinePredictor.open(file, "x", [4], { maxFileBytes: 10, maxRunMs: 1 })).resolves.toBeUndefined();
    await expect(InlinePredictor.open(file, "x", [4], { maxFileBytes: 1 << 20, maxRunMs: 0 })).resolves.toBeUndefined();
  });
});
