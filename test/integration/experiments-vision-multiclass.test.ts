import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { contractErrors } from "../../src/contract/validate.js";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { waitForStatus, type Api, startExperimentServer, visionRequest } from "./experiments-fixtures.js";

// Issue 5's "Done when", multiclass case (binary: experiments-vision.test.ts; multi-label and regression:
// experiments-vision-tasks.test.ts): three classes of generated images through the HTTP API (upload, POST, poll) to
// `ready`, the class names taken from an extra column that maps 1:1 to the codes, the manifest valid against the
// contract, test metrics well above chance, and /predict answering with the seed's fields. Tiny images (24x24) and
// a 20 s budget: the plumbing and an easy signal, not model quality.

vi.setConfig({ testTimeout: 240_000 });

const SIDE = 24;
const PER_CLASS = 30;
const NAMES = ["clear", "mass", "band"];

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Class 0: dark noise; 1: a bright 10 px square in the middle; 2: a bright horizontal band 6 rows high. */
async function image(rand: () => number, cls: number): Promise<Buffer> {
  const px = Buffer.alloc(SIDE * SIDE);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      const mark = (cls === 1 && x >= 7 && x < 17 && y >= 7 && y < 17) || (cls === 2 && y >= 9 && y < 15);
      px[y * SIDE + x] = Math.round(20 + rand() * 40 + (mark ? 170 : 0));
    }
  }
  return sharp(px, { raw: { width: SIDE, height: SIDE, channels: 1 } })
    .png()
    .toBuffer();
}

/** One image per patient; `finding` names the code in `label` one-to-one. */
async function multiclassZip(): Promise<Buffer> {
  const rand = rng(11);
  const files: Record<string, Buffer | string> = {};
  const rows = ["patient,image,label,finding"];
  for (let i = 0; i < 3 * PER_CLASS; i++) {
    const cls = i % 3;
    files[`img/${i}.png`] = await image(rand, cls);
    rows.push(`p${i},img/${i}.png,${cls},${NAMES[cls]}`);
  }
  files["labels.csv"] = rows.join("\n") + "\n";
  return makeZip(files);
}

describe(`vision multiclass experiment through the API on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: UserWithKey;
  let client: Api;
  beforeAll(async () => ({ server, user, client } = await startExperimentServer()));
  afterAll(() => server?.teardown());

  it("three named classes: trained to ready, contract-valid manifest, metrics above chance, /predict in the seed's shape", async () => {
    const put = await fetch(`${server.url}/v1/files/${user.userId}/multiclass/data.zip`, {
      method: "PUT",
      headers: bearer(user.key, { "content-type": "application/zip" }),
      body: await multiclassZip(),
    });
    expect(put.status).toBe(201);
    const post = await client.post(
      "/v1/experiments",
      visionRequest(user.userId, 1, `${user.userId}/multiclass/data.zip`, { time_budget_s: 20 }),
    );
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 220_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");

    const manifest = (await server.services.serving.repo.latest(user.userId, 1))!.manifest as any;
    expect(contractErrors("manifest", manifest)).toEqual([]);
    expect(manifest.problem).toBe("multiclass");
    expect(manifest.classes).toEqual(NAMES.map((name, i) => expect.objectContaining({ index: i, code: String(i), name })));
    expect(manifest.thresholds).toHaveLength(3);

    for (const k of ["auc", "f_macro", "precision", "recall", "accuracy"]) {
      const m = done.metrics[k];
      expect(m).toEqual(expect.objectContaining({ value: expect.any(Number), ci_low: expect.any(Number), ci_high: expect.any(Number) }));
      expect(m.ci_low).toBeLessThanOrEqual(m.value + 1e-9);
      expect(m.ci_high).toBeGreaterThanOrEqual(m.value - 1e-9);
    }
    expect(Object.keys(done.metrics.auc.per_class).sort()).toEqual(["0", "1", "2"]);
    // Chance is AUC 0.5 and accuracy 1/3; the three patterns are bright, large and distinct.
    expect(done.metrics.auc.value).toBeGreaterThan(0.85);
    expect(done.metrics.accuracy.value).toBeGreaterThan(0.6);

    // /predict on fresh images of each class: the seed's fields, one-hot prediccion of the argmax, a map per positive.
    const rand = rng(99);
    let right = 0;
    for (let cls = 0; cls < 3; cls++) {
      const b64 = (await image(rand, cls)).toString("base64");
      const res = await client.post("/v1/experiments/1/predict", { message: `data:image/png;base64,${b64}` });
      expect(res.status).toBe(201);
      const body = res.body;
      expect(body.error).toBe(0);
      expect(body.classes).toEqual({ "0": "clear", "1": "mass", "2": "band" });
      expect(body.score).toHaveLength(3);
      expect(body.score.reduce((a: number, b: number) => a + b, 0)).toBeCloseTo(1, 4);
      expect(body.prediccion).toHaveLength(3);
      const top = body.score.indexOf(Math.max(...body.score));
      expect(body.prediccion).toEqual([0, 1, 2].map((j) => (j === top ? 1 : 0)));
      expect(Object.keys(body.gradients)).toEqual([String(top)]);
      expect([body.columnas, body.filas]).toEqual([SIDE, SIDE]);
      const map = body.gradients[String(top)];
      expect(map).toHaveLength(SIDE);
      expect(map.every((row: number[]) => row.length === SIDE && row.every((v) => Number.isInteger(v) && v >= 0 && v <= 255))).toBe(true);
      if (top === cls) right++;
    }
    expect(right).toBeGreaterThanOrEqual(2);
  });
});
