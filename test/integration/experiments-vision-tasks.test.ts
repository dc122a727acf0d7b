import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { contractErrors } from "../../src/contract/validate.js";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { waitForStatus, type Api, startExperimentServer } from "./experiments-fixtures.js";

// Issue 5's "Done when" beside the binary case (experiments-vision.test.ts) and the multiclass one
// (experiments-vision-multiclass.test.ts): a multi-label and a regression model built from generated images through
// the HTTP API (upload, POST, poll) to `ready`, with the published manifest valid against
// pipelines/contract/manifest.schema.json and the test metrics in contract names with their bootstrap intervals.
// Tiny images (24x24) and a 20 s budget: the plumbing and an easy signal.

vi.setConfig({ testTimeout: 240_000 });

const SIDE = 24;
const N = 72;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** A dark noisy grey image with an optional bright square (side `square`, centred) and an optional bright bar
 * across the top rows. */
async function image(rand: () => number, square: number, bar: boolean): Promise<Buffer> {
  const px = Buffer.alloc(SIDE * SIDE);
  const lo = Math.floor((SIDE - square) / 2);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      const inSquare = square > 0 && x >= lo && x < lo + square && y >= lo && y < lo + square;
      const inBar = bar && y >= 1 && y < 4;
      px[y * SIDE + x] = Math.round(20 + rand() * 40 + (inSquare || inBar ? 170 : 0));
    }
  }
  return sharp(px, { raw: { width: SIDE, height: SIDE, channels: 1 } })
    .png()
    .toBuffer();
}

/** Two independent binary labels: has_square, has_bar. */
async function multilabelZip(): Promise<Buffer> {
  const rand = rng(5);
  const files: Record<string, Buffer | string> = {};
  const rows = ["patient,image,has_square,has_bar"];
  for (let i = 0; i < N; i++) {
    const sq = i % 2,
      bar = Math.floor(i / 2) % 2;
    files[`img/${i}.png`] = await image(rand, sq ? 10 : 0, bar === 1);
    rows.push(`p${i},img/${i}.png,${sq},${bar}`);
  }
  files["labels.csv"] = rows.join("\n") + "\n";
  return makeZip(files);
}

/** Numeric label: the side of the bright square (4..18 px). */
async function regressionZip(): Promise<Buffer> {
  const rand = rng(9);
  const files: Record<string, Buffer | string> = {};
  const rows = ["patient,image,square_side"];
  for (let i = 0; i < N; i++) {
    const side = 4 + (i % 15);
    files[`img/${i}.png`] = await image(rand, side, false);
    rows.push(`p${i},img/${i}.png,${side}`);
  }
  files["labels.csv"] = rows.join("\n") + "\n";
  return makeZip(files);
}

describe(`vision multi-label and regression experiments through the API on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: UserWithKey;
  let client: Api;
  beforeAll(async () => ({ server, user, client } = await startExperimentServer()));
  afterAll(() => server?.teardown());

  async function run(id: number, zip: Buffer, fields: Record<string, unknown>) {
    const put = await fetch(`${server.url}/v1/files/${user.userId}/vision-${id}/data.zip`, {
      method: "PUT",
      headers: bearer(user.key, { "content-type": "application/zip" }),
      body: zip,
    });
    expect(put.status).toBe(201);
    const post = await client.post("/v1/experiments", {
      zip_gcloud: `${user.userId}/vision-${id}/data.zip`,
      images_col: "image",
      optimization_type: 1,
      experiment_id: id,
      user_id: user.userId,
      study_type: "Builder",
      task: "vision",
      optimization_metric: "AUC",
      time_budget_s: 20,
      ...fields,
    });
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, id, ["ready", "failed", "invalid_dataset"], 220_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.model.kind).toBe("vision_classification");
    const manifest = (await server.services.serving.repo.latest(user.userId, id))!.manifest as any;
    expect(contractErrors("manifest", manifest)).toEqual([]);
    for (const m of Object.values(done.metrics) as { value: number | null; ci_low: number | null; ci_high: number | null }[]) {
      if (m.value === null || m.ci_low === null || m.ci_high === null) continue;
      expect(m.ci_low).toBeLessThanOrEqual(m.value + 1e-9);
      expect(m.ci_high).toBeGreaterThanOrEqual(m.value - 1e-9);
    }
    return { done, manifest };
  }

  it("multi-label: two binary label columns", async () => {
    const { done, manifest } = await run(1, await multilabelZip(), { label_cols: ["has_square", "has_bar"], model_type: 0 });
    expect(manifest.problem).toBe("multilabel");
    expect(manifest.classes.map((c: { name: string }) => c.name)).toEqual(["has_square", "has_bar"]);
    expect(manifest.thresholds).toHaveLength(2);
    for (const k of ["auc", "f_macro", "precision", "recall", "accuracy"]) expect(done.metrics[k]).toBeDefined();
    expect(Object.keys(done.metrics.auc.per_class).sort()).toEqual(["0", "1"]);
    // Both marks are bright, large and noise-free in shape: a working pipeline separates them easily.
    expect(done.metrics.auc.value).toBeGreaterThan(0.75);
  });

  it("regression: a numeric label (model_type 1)", async () => {
    const { done, manifest } = await run(2, await regressionZip(), { label_cols: ["square_side"], model_type: 1 });
    expect(manifest.problem).toBe("regression");
    for (const k of ["mae", "rmse", "r2"]) expect(done.metrics[k]).toEqual(expect.objectContaining({ value: expect.any(Number) }));
    expect(done.metrics.auc).toBeUndefined();
    // The label is the square's side, visible in the pixel mass: better than predicting the mean (R² > 0).
    expect(done.metrics.r2.value).toBeGreaterThan(0.3);
  });
});
