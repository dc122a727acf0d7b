import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Image descriptors' drift through the real server (issue 49 items 1 and 4): the serving fixture's binary image
// model with a baseline of 60x40 images of mid intensity, then 40 predictions of 120x40 dark images. Both of serving's
// image paths are covered: the model threads (the default) and the batching placement (SERVING_MAX_BATCH), where a
// preprocessing thread decodes. The drift table shows width and aspect drifted, height and channels not, with the
// sample size the predictions gave, and the report keeps nothing of the images.

const numeric = (name: string, edges: number[], counts: number[]) => ({
  name,
  type: "numeric",
  edges,
  counts,
  missing: 0,
  quantiles: { p05: edges[0], p25: edges[0], p50: edges[0], p75: edges[0], p95: edges[0] },
});

function modelWithBaseline(): string {
  const source = servingFixtures().modelDir("vision_binary");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "monitoring-images-"));
  fs.copyFileSync(path.join(source, "model.onnx"), path.join(dir, "model.onnx"));
  const m = JSON.parse(fs.readFileSync(path.join(source, "manifest.json"), "utf8"));
  m.monitoring_baseline = {
    schema_version: 1,
    source: "validation and test patients",
    n: 200,
    image: {
      images: 200,
      descriptors: [
        numeric("img:width", [50, 70], [0, 200, 0]),
        numeric("img:height", [30, 50], [0, 200, 0]),
        numeric("img:aspect", [1, 2], [0, 200, 0]),
        { name: "img:channels", type: "categorical", counts: { "3": 200 } },
        numeric("img:mean", [60, 100, 140], [50, 50, 50, 50]),
        numeric("img:std", [1, 10], [0, 200, 0]),
      ],
    },
  };
  fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(m));
  return dir;
}

describe.skipIf(!haveFixturePython)("monitoring: image descriptors' drift", () => {
  const servers: TestServer[] = [];
  let modelDir: string;
  beforeAll(() => {
    modelDir = modelWithBaseline();
  });
  afterAll(async () => {
    for (const s of servers) await s.teardown();
    fs.rmSync(modelDir, { recursive: true, force: true });
  });

  it.each([
    ["model threads", {}],
    ["batching placement", { SERVING_MAX_BATCH: "4" }],
  ])("%s: width and aspect drift, height and channels do not", async (_, env) => {
    const server = await startTestServer("pglite", env);
    servers.push(server);
    const alice = await createUserWithKey(server);
    await publishFixture(server, alice.userId, 5, modelDir);
    for (let i = 0; i < 40; i++) {
      const png = await sharp({ create: { width: 120, height: 40, channels: 3, background: { r: 20 + i, g: 30, b: 40 } } })
        .png()
        .toBuffer();
      const res = await fetch(`${server.url}/v1/experiments/5/predict`, {
        method: "POST",
        headers: bearer(alice.key, { "content-type": "application/json" }),
        body: JSON.stringify({ message: `data:image/png;base64,${png.toString("base64")}` }),
      });
      expect(res.status).toBe(201);
    }
    const res = await fetch(`${server.url}/v1/models/5/monitoring`, { headers: bearer(alice.key) });
    const text = await res.text();
    const r = JSON.parse(text);
    const by = Object.fromEntries(r.drift.features.map((f: { feature: string }) => [f.feature, f]));
    expect(by["img:width"]).toMatchObject({ kind: "descriptor", n: 40, baseline_n: 200, drifted: true, severity: "high" });
    expect(by["img:aspect"]).toMatchObject({ drifted: true, n: 40 });
    expect(by["img:mean"]).toMatchObject({ drifted: true, n: 40 }); // dark: every image in the lowest bin
    expect(by["img:height"]).toMatchObject({ drifted: false, severity: "none", n: 40 });
    expect(by["img:channels"]).toMatchObject({ type: "categorical", drifted: false, n: 40 });
    expect(r.drift.status).toBe("drift");
    expect(r.predictions).toBe(40);
    // Nothing of an image is in the report: no data: URI, no pixel run.
    expect(text).not.toContain("base64");
  });
});
