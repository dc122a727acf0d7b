import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, diagnosisRows, waitForStatus, type Api } from "./experiments-fixtures.js";

// A clinical table whose unknown values are written as NA / ? (as R, pandas and UCI files write them), through the
// real Python pipeline: the column is numeric with missing values in the report, the model is trained with the gaps,
// GET /v1/models says which column takes null, and /predict answers a row with null there. A Retrospective study
// whose new data has NA where training had none is scored with the training median and says so in its report.

vi.setConfig({ testTimeout: 180000 });

describe(`missing-value markers end to end on ${primaryTarget()}`, () => {
  let server: TestServer;
  let client: Api;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    const user = await createUserWithKey(server);
    userId = user.userId;
    client = api(server.url, user.key);
    // f1 unknown in every fifth row; `lab` is a third feature with no gaps.
    const rows = diagnosisRows(240, 11, { name: "lab", value: (_i, rand) => (rand() * 3).toFixed(2) }).map((line, i) => {
      if (i === 0 || i % 5) return line;
      const v = line.split(",");
      v[2] = i % 10 ? "?" : "NA";
      return v.join(",");
    });
    const zipPath = `${user.userId}/gaps/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": rows.join("\n") + "\n" })));
    const post = await client.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, ["f1", "f2", "lab"]));
    expect(post.status).toBe(202);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("trains with the gaps, and /predict takes null only where the training data had them", async () => {
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    const f1 = done.dataset_report.summary.features.find((f: { name: string }) => f.name === "f1");
    expect(f1).toMatchObject({ type: "numeric", missing: 48 });
    expect(done.dataset_report.warnings.map((w: { code: string }) => w.code)).toContain("missing_values");
    expect(done.metrics.auc.value).toBeGreaterThan(0.75);

    const model = await client.get("/v1/models/1");
    expect(model.status).toBe(200);
    expect(model.body.inputs.columns).toEqual([
      expect.objectContaining({ name: "f1", type: "numeric", missing: true }),
      expect.not.objectContaining({ missing: true }),
      expect.not.objectContaining({ missing: true }),
    ]);

    const known = await client.post("/v1/experiments/1/predict", { message: [9.5, 4.5, 1] });
    const unknown = await client.post("/v1/experiments/1/predict", { message: [null, 4.5, 1] });
    expect(known.status).toBe(201);
    expect(unknown.status).toBe(201);
    expect(unknown.body).toMatchObject({ error: 0, classes: expect.any(Object) });
    expect(unknown.body.score).toHaveLength(2);
    for (const s of unknown.body.score) expect(Number.isFinite(s)).toBe(true);
    expect(unknown.body.score).not.toEqual(known.body.score); // the gap is not read as f1 = 9.5 (nor as 0, below)
    const zero = await client.post("/v1/experiments/1/predict", { message: [0, 4.5, 1] });
    expect(unknown.body.score).not.toEqual(zero.body.score);

    const refused = await client.post("/v1/experiments/1/predict", { message: [9.5, null, 1] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain(
      "f2: must be a finite number (the model's training data had no missing values in this column)",
    );
  });

  it("a Retrospective study with NA where training had none completes, and its report says which rows were filled", async () => {
    const rows = diagnosisRows(60, 23, { name: "lab", value: (i, rand) => (i === 3 || i === 7 ? "NA" : (rand() * 3).toFixed(2)) });
    const zipPath = `${userId}/gaps/new.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": rows.join("\n") + "\n" })));
    const post = await client.post(
      "/v1/experiments",
      dataRequest(userId, 2, zipPath, ["f1", "f2", "lab"], { study_type: "Retrospective", source_experiment_id: 1 }),
    );
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.metrics.auc.value).toBeGreaterThan(0.7);
    const report = await client.get("/v1/experiments/2/report");
    expect(report.status).toBe(200);
    expect(report.body.report.unseen_values).toEqual([
      { column: "lab", rows: 2, examples: ["NA"], filled_with: "training median", value: expect.any(Number) },
    ]);
    const log = await client.get("/v1/experiments/2/logs");
    expect(String(log.body)).toContain("column 'lab': 2 of 60 rows hold values the model never saw in training");
    // The fill is for Retrospective studies; the model's public description (what /predict takes) does not carry it.
    const model = await client.get("/v1/models/1");
    for (const c of model.body.inputs.columns) expect(c).not.toHaveProperty("fill");
  });
});
