import { Readable } from "node:stream";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { makeZip } from "../helpers/zips.js";
import { api, waitForStatus, visionRequest } from "./experiments-fixtures.js";

// A vision classification experiment through the real vision pipeline: the kind mapping (task vision ->
// vision_classification), images_col and the image root reach Python intact. Tiny generated images and a
// small budget: this checks the plumbing, not the model.

vi.setConfig({ testTimeout: 240_000 });

async function imageZip(): Promise<Buffer> {
  const files: Record<string, Buffer | string> = {};
  const rows = ["patient,label,image"];
  for (let i = 0; i < 60; i++) {
    const label = i % 2;
    // Class 1: a bright square in the middle; class 0: plain dark noise.
    const px = Buffer.alloc(24 * 24);
    for (let j = 0; j < px.length; j++)
      px[j] = ((j * 37 + i * 11) % 40) + (label && j % 24 > 6 && j % 24 < 18 && j / 24 > 6 && j / 24 < 18 ? 180 : 0);
    files[`images/${i}.png`] = await sharp(px, { raw: { width: 24, height: 24, channels: 1 } })
      .png()
      .toBuffer();
    rows.push(`p${i},${label},images/${i}.png`);
  }
  files["labels.csv"] = rows.join("\n") + "\n";
  return makeZip(files);
}

describe(`vision experiment on ${primaryTarget()}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("trains a vision_classification model to ready", async () => {
    const user = await createUserWithKey(server);
    const client = api(server.url, user.key);
    const zipPath = `${user.userId}/vision/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(await imageZip()));
    const post = await client.post("/v1/experiments", visionRequest(user.userId, 1, zipPath, { time_budget_s: 5 }));
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.model.kind).toBe("vision_classification");
    expect(done.metrics.auc).toEqual(
      expect.objectContaining({ value: expect.any(Number), ci_low: expect.any(Number), ci_high: expect.any(Number) }),
    );
  });
});
