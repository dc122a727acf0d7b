import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { models } from "../../src/db/schema.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { api, dataRequest, diagnosisRows, waitFor, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 37 item 3: operating points, model versions and rollback, on a small binary table model trained by the
// real pipeline. With TEST_DATABASE_URL, two API replicas share one Postgres and one data folder (the bucket):
// the operating point is saved through A, and B must answer with the new version at once (the models table's
// notification, not its 2 s lookup cache, which this test stretches to 10 minutes on B). Without it, one PGlite
// server plays both parts.

vi.setConfig({ testTimeout: 240_000 });

const twoReplicas = !!process.env.TEST_DATABASE_URL;

describe(`operating points${twoReplicas ? " on two replicas (Postgres)" : " (PGlite, one replica)"}`, () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>> | undefined;
  let dataDir = "";
  let a: TestServer;
  let b: TestServer;
  let user: UserWithKey;
  let clientA: Api;
  let clientB: Api;
  /** f1 values (f2 = 2.5, noise = 0.5) and version 1's probability of the positive class for each. */
  let grid: Array<{ row: number[]; score: number; prediccion: number[] }> = [];
  let positiveIndex = 1;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-opoint-"));
    if (twoReplicas) {
      db = await createThrowawayDatabase();
      const env = { DATABASE_URL: db.url, BUILDER_DATA_DIR: dataDir };
      a = await startTestServer("pglite", env); // DATABASE_URL wins
      b = await startTestServer("pglite", env);
    } else {
      a = b = await startTestServer("pglite", { BUILDER_DATA_DIR: dataDir });
    }
    user = await createUserWithKey(a);
    clientA = api(a.url, user.key);
    clientB = api(b.url, user.key);
    const rows = diagnosisRows(300, 23, { name: "noise", value: (_i, rand) => rand().toFixed(3) });
    const zipPath = `${user.userId}/opoint/data.zip`;
    await a.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": rows.join("\n") + "\n" })));
    expect((await clientA.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, ["f1", "f2", "noise"]))).status).toBe(202);
    const done = await waitForStatus(clientA, 1, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    positiveIndex = done.positive_class.index;
  }, 240_000);
  afterAll(async () => {
    await a?.teardown();
    if (b !== a) await b?.teardown();
    await db?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const predict = async (client: Api, row: number[]) => {
    const res = await client.post("/v1/experiments/1/predict", { message: row });
    expect(res.status).toBe(201);
    return res.body as { prediccion: number[]; score: number[] };
  };

  it("the explorer's data is the validation curve; the request body is checked field by field", async () => {
    const res = await clientA.get("/v1/models/1/operating-point");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ experiment_id: 1, version: 1, available: true, validation_source: "validation split" });
    const curve = res.body.curve as Array<{ threshold: number; tp: number; fp: number; tn: number; fn: number }>;
    expect(curve.length).toBeGreaterThan(5);
    const n = res.body.validation_counts.positive + res.body.validation_counts.negative;
    for (const p of curve) expect(p.tp + p.fp + p.tn + p.fn).toBe(n);
    expect(curve.map((p) => p.threshold)).toEqual([...curve.map((p) => p.threshold)].sort((x, y) => y - x));
    expect(res.body.current.threshold).toBeGreaterThan(0);
    expect(JSON.stringify(res.body)).not.toContain("patient");

    for (const [body, field] of [
      [{ rule: "magic" }, "rule"],
      [{ rule: "sensitivity", target: 1.5 }, "target"],
      [{ rule: "specificity", target: -0.1 }, "target"],
      [{ rule: "sensitivity" }, "target"],
      [{ rule: "threshold" }, "threshold"],
      [{ rule: "threshold", threshold: "0.4" }, "threshold"],
    ] as const) {
      const bad = await clientA.post("/v1/models/1/operating-point", body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(
        bad.body.error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    // Another user's experiment does not exist for them.
    const other = await createUserWithKey(a);
    expect((await api(a.url, other.key).post("/v1/models/1/operating-point", { rule: "youden" })).status).toBe(404);
    expect((await api(a.url, other.key).get("/v1/models/1/versions")).status).toBe(404);
  });

  it("sensitivity >= 0.95 publishes version 2, which changes a borderline answer on both replicas at once; rollback restores version 1", async () => {
    const before = await clientA.get("/v1/models/1/operating-point");
    const t1 = before.body.current.threshold as number;
    // Version 1's answers over a line of inputs, on both replicas (so both have version 1 loaded).
    grid = [];
    for (let i = 0; i <= 200; i++) {
      const row = [i / 20, 2.5, 0.5];
      const r = await predict(clientA, row);
      grid.push({ row, score: r.score[positiveIndex], prediccion: r.prediccion });
    }
    await predict(clientB, grid[0].row);
    // B trusts only the notification from here: its lookup cache would otherwise keep version 1 for 10 minutes.
    (b.services.serving.cache as unknown as { o: { latestTtlMs: number } }).o.latestTtlMs = 600_000;

    const saved = await clientA.post("/v1/models/1/operating-point", { rule: "sensitivity", target: 0.95 });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    const v2 = saved.body;
    expect(v2).toMatchObject({ version: 2, current: true, operating_point: { rule: "sensitivity", target: 0.95, from_version: 1 } });
    const t2 = v2.operating_point.threshold as number;
    expect(v2.operating_point.validation.sensitivity).toBeGreaterThanOrEqual(0.95);
    const sens = v2.operating_point.test.sensitivity;
    expect(sens.ci_low).toBeLessThanOrEqual(sens.value);
    expect(sens.value).toBeLessThanOrEqual(sens.ci_high);
    expect(v2.test.sensitivity.value).toBe(sens.value);
    expect(t2).not.toBe(t1);
    // Monitoring's baseline follows the operating point: the share flagged positive at the new threshold.
    const rate = async (version: number) =>
      ((await a.services.db.select().from(models)).find((m) => m.version === version)!.manifest as any).monitoring_baseline.positive_rate;
    expect(await rate(2)).not.toBe(await rate(1));
    expect((await rate(2)) > (await rate(1))).toBe(t2 < t1);

    // A borderline input: its probability lies between the two thresholds, so its answer flips.
    const [lo, hi] = [Math.min(t1, t2), Math.max(t1, t2)];
    const borderline = grid.find((g) => g.score > lo + 1e-6 && g.score < hi - 1e-6);
    expect(borderline, `an input scored between ${lo} and ${hi}`).toBeDefined();
    const now = await predict(clientA, borderline!.row);
    expect(now.prediccion).not.toEqual(borderline!.prediccion);
    expect(now.prediccion[positiveIndex]).toBe(t2 < t1 ? 1 : 0);
    // Replica B switches at once (well within its stretched lookup cache).
    const t0 = Date.now();
    await waitFor(
      "replica B to answer with version 2",
      async () => (await predict(clientB, borderline!.row)).prediccion[positiveIndex] === now.prediccion[positiveIndex],
      5_000,
      20,
    );
    expect(Date.now() - t0).toBeLessThan(2_000);

    // The experiment, its versions and its history say so.
    const exp = (await clientA.get("/v1/experiments/1")).body;
    expect(exp.model).toMatchObject({ version: 2, operating_point: { rule: "sensitivity", threshold: t2 } });
    expect(exp.metrics.sensitivity.value).toBe(sens.value);
    expect(exp.history.at(-1)).toMatchObject({ status: "ready", event: "operating_point_saved", version: 2 });
    const versions = (await clientA.get("/v1/models/1/versions")).body;
    expect(versions.current_version).toBe(2);
    expect(versions.data.map((v: { version: number; current: boolean }) => [v.version, v.current])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await clientA.get("/v1/models/1")).body.version).toBe(2);
    const card = (await clientA.get("/v1/experiments/1/model-card")).body;
    expect(card.model_version).toBe(2);
    expect(card.performance.operating_point.saved).toMatchObject({ version: 2, rule: "sensitivity", target: 0.95 });

    // Rollback through B: version 1's answers come back on both.
    const back = await clientB.post("/v1/models/1/versions/1/current");
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ version: 1, current: true, operating_point: null });
    expect((await predict(clientB, borderline!.row)).prediccion).toEqual(borderline!.prediccion);
    await waitFor(
      "replica A to answer with version 1 again",
      async () => {
        const r = await predict(clientA, borderline!.row);
        return r.prediccion[positiveIndex] === borderline!.prediccion[positiveIndex];
      },
      5_000,
      20,
    );
    for (const g of grid.filter((_g, i) => i % 10 === 0)) expect((await predict(clientA, g.row)).prediccion).toEqual(g.prediccion);
    const after = (await clientA.get("/v1/experiments/1")).body;
    expect(after.model.version).toBe(1);
    expect(after.history.at(-1)).toMatchObject({ event: "model_version_restored", version: 1 });
    expect((await clientA.get("/v1/models/1/versions")).body.current_version).toBe(1);

    // The audit log has both.
    const audit = (await clientA.get("/v1/audit")).body;
    const actions = (audit.data as Array<{ action: string }>).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["operating_point_saved", "model_version_restored"]));

    // Unknown version: 404.
    expect((await clientA.post("/v1/models/1/versions/9/current")).status).toBe(404);
  });

  it("a Retrospective study of the model uses its current version's threshold; a study has no operating point of its own", async () => {
    const v = await clientA.post("/v1/models/1/operating-point", { rule: "specificity", target: 0.95 });
    expect(v.status).toBe(201);
    const rows = diagnosisRows(80, 99, { name: "noise", value: (_i, rand) => rand().toFixed(3) });
    const zipPath = `${user.userId}/opoint/new.zip`;
    await a.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": rows.join("\n") + "\n" })));
    const retro = dataRequest(user.userId, 2, zipPath, ["f1", "f2", "noise"], { study_type: "Retrospective", source_experiment_id: 1 });
    expect((await clientA.post("/v1/experiments", retro)).status).toBe(202);
    const done = await waitForStatus(clientA, 2, ["ready", "failed", "invalid_dataset"], 150_000);
    expect(done.failure_reason).toBeNull();
    expect((await clientA.get("/v1/models/2")).body.thresholds).toEqual(v.body.thresholds);
    const explorer = await clientA.get("/v1/models/2/operating-point");
    expect(explorer.body).toMatchObject({ available: false });
    const refused = await clientA.post("/v1/models/2/operating-point", { rule: "youden" });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("source experiment");
  });

  it.skipIf(!haveFixturePython)(
    "a model built before operating points says to rebuild; a multiclass or regression model is refused with 422",
    async () => {
      const fx = servingFixtures();
      await publishFixture(a, user.userId, 30, fx.modelDir("tabular_binary")); // no operating_scores.json: an older build
      await publishFixture(a, user.userId, 31, fx.modelDir("tabular_multiclass"));
      await publishFixture(a, user.userId, 32, fx.modelDir("tabular_regression"));
      const old = await clientA.get("/v1/models/30/operating-point");
      expect(old.body).toMatchObject({ available: false });
      expect(old.body.message).toContain("rebuild");
      const refused = await clientA.post("/v1/models/30/operating-point", { rule: "youden" });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe("no_operating_scores");
      for (const id of [31, 32]) {
        const res = await clientA.post(`/v1/models/${id}/operating-point`, { rule: "sensitivity", target: 0.9 });
        expect(res.status).toBe(422);
        expect(res.body.error.message).toContain("binary classification");
        expect((await clientA.get(`/v1/models/${id}/operating-point`)).body).toMatchObject({ available: false });
        // Versions and rollback still work for any model.
        expect((await clientA.get(`/v1/models/${id}/versions`)).body.data).toHaveLength(1);
      }
      // No such experiment: 404.
      expect((await clientA.get("/v1/models/77/versions")).status).toBe(404);
    },
  );

  it("other rules publish further versions; deleting the experiment removes every version's files", async () => {
    for (const body of [{ rule: "youden" }, { rule: "f1" }, { rule: "specificity", target: 0.9 }, { rule: "threshold", threshold: 0.5 }]) {
      const res = await clientA.post("/v1/models/1/operating-point", body);
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(res.body.current).toBe(true);
      if (body.rule === "specificity") expect(res.body.operating_point.validation.specificity).toBeGreaterThanOrEqual(0.9);
      if (body.rule === "threshold") expect(res.body.operating_point.threshold).toBe(0.5);
    }
    expect((await clientA.get("/v1/models/1/versions")).body.data).toHaveLength(7);
    expect((await clientA.del("/v1/experiments/1")).status).toBe(202);
    expect((await clientA.post("/v1/experiments/1/predict", { message: grid[0].row })).status).toBe(404);
    await waitFor("the experiment to be gone", async () => (await clientA.get("/v1/experiments/1")).status === 404, 20_000, 100);
    expect(fs.existsSync(path.join(dataDir, "bucket", "models", user.userId, "1"))).toBe(false);
  });
});
