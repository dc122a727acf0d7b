import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binOf } from "../../src/monitoring/baseline.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Issue 49 item 1 and 4 for detection models: a baseline of boxes per image, box sizes (the square root of a box's
// share of the image) and box scores, as the pipeline freezes it (common/monitoring_baseline.py detection), here
// written from the serving fixture's known answers on two images. Served predictions are binned the same way: the
// same two images again show no drift; two other images, on which the detector scores its boxes otherwise, do.

const BOX_COUNT_EDGES = [1, 2, 3, 4, 5, 7, 10, 15, 20, 30];

/** A PNG's width and height, from its header. */
function pngSize(file: string): { width: number; height: number } {
  const b = fs.readFileSync(file);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function deciles(values: number[]): number[] {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => {
    const i = p * (s.length - 1);
    const lo = Math.floor(i);
    return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (i - lo);
  };
  return [...new Set([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map((p) => Math.round(q(p) * 1e6) / 1e6))];
}

function numeric(name: string, values: number[], edges = deciles(values), times = 20) {
  const counts = new Array<number>(edges.length + 1).fill(0);
  for (const v of values) counts[binOf(edges, v)] += times;
  return { name, type: "numeric", edges, counts, missing: 0, quantiles: { p05: 0, p25: 0, p50: 0, p75: 0, p95: 0 } };
}

describe.skipIf(!haveFixturePython)("drift of a detection model's boxes", () => {
  let s: TestServer;
  let alice: UserWithKey;
  let modelDir: string;
  const fx = servingFixtures();
  const BASELINE_IMAGES = ["grey.png", "rgb.png"];
  const OTHER_IMAGES = ["tall.png", "palette.png"];

  const call = async (p: string, body?: unknown) => {
    const res = await fetch(`${s.url}${p}`, {
      method: body === undefined ? "GET" : "POST",
      headers: bearer(alice.key, body === undefined ? {} : { "content-type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    s = await startTestServer("pglite", { MONITORING_FLUSH_MS: "600000", ALERT_EVALUATE_MS: "0" });
    alice = await createUserWithKey(s, { rateLimitPerMinute: 100_000 });
    modelDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-monitoring-detection-"));
    const src = fx.modelDir("detection");
    fs.copyFileSync(path.join(src, "model.onnx"), path.join(modelDir, "model.onnx"));
    const manifest = JSON.parse(fs.readFileSync(path.join(src, "manifest.json"), "utf8"));
    // What the pipeline would freeze, from the fixture's answers on the baseline images (20 copies of each).
    const sizes: number[] = [];
    const scores: number[] = [];
    const perImage: number[] = [];
    for (const img of BASELINE_IMAGES) {
      const want = fx.expected[`detection/${img}`];
      const { width, height } = pngSize(path.join(fx.dir, "images", img));
      perImage.push(want.boxes.length);
      for (const b of want.boxes) sizes.push(Math.sqrt((Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1])) / (width * height)));
      scores.push(...want.score);
    }
    manifest.monitoring_baseline = {
      schema_version: 1,
      source: "validation and test patients",
      n: 40,
      detection: {
        images: 40,
        boxes: 20 * sizes.length,
        descriptors: [numeric("det:boxes", perImage, BOX_COUNT_EDGES), numeric("det:size", sizes), numeric("det:score", scores)],
      },
    };
    fs.writeFileSync(path.join(modelDir, "manifest.json"), JSON.stringify(manifest));
    await publishFixture(s, alice.userId, 5, modelDir);
    await publishFixture(s, alice.userId, 6, modelDir);
    for (let i = 0; i < 60; i++) {
      expect((await call("/v1/experiments/5/predict", { message: fx.dataUri(BASELINE_IMAGES[i % 2]) })).status).toBe(201);
      expect((await call("/v1/experiments/6/predict", { message: fx.dataUri(OTHER_IMAGES[i % 2]) })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await s?.teardown();
    if (modelDir) fs.rmSync(modelDir, { recursive: true, force: true });
  });

  const detectionRows = (r: any) =>
    Object.fromEntries(r.drift.features.filter((f: any) => f.feature.startsWith("det:")).map((f: any) => [f.feature, f]));

  it("judges boxes per image, box sizes and scores: the baseline's images again show no drift", async () => {
    const r = (await call("/v1/models/5/monitoring")).body;
    expect(r.drift.status).not.toBe("unchecked");
    const rows = detectionRows(r);
    const boxes = 60 * (perImageBoxes(BASELINE_IMAGES) / 2);
    expect(rows["det:boxes"]).toMatchObject({ kind: "descriptor", n: 60, baseline_n: 40, drifted: false });
    expect(rows["det:size"]).toMatchObject({ n: boxes, drifted: false });
    expect(rows["det:score"]).toMatchObject({ n: boxes, drifted: false });
    expect(["stable", "watch"]).toContain(r.drift.status);
  });

  it("flags the box scores of other images as drifted, the worst first", async () => {
    const r = (await call("/v1/models/6/monitoring")).body;
    const rows = detectionRows(r);
    const boxes = 60 * (perImageBoxes(OTHER_IMAGES) / 2);
    expect(rows["det:score"]).toMatchObject({ n: boxes, drifted: true });
    expect(["medium", "high"]).toContain(rows["det:score"].severity);
    expect(r.drift.features[0].feature).toBe("det:score");
    // Every box's size was binned (the image's size is known to monitoring), whether or not it drifted.
    expect(rows["det:size"].n).toBe(boxes);
    expect(r.drift.status).toBe("drift");
  });

  function perImageBoxes(images: string[]): number {
    return images.reduce((n, img) => n + fx.expected[`detection/${img}`].boxes.length, 0);
  }
});
