import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { storageEnv } from "../helpers/storage.js";
import { haveFixturePython } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { fixtureRow, fixtureWithBaseline, predict } from "./monitoring-fixtures.js";

// Issue 49 item 2: what serving keeps of each prediction. Two replicas on one Postgres serve the same model; each
// adds its own aggregates (upsert-add) and records; a stopped replica writes what it held; deleting the
// experiment takes records and aggregates; the retention purge removes old records. Nothing of the input is kept.

const rowsOf = (r: unknown) => (r as { rows: any[] }).rows;

describe.skipIf(!process.env.TEST_DATABASE_URL || !haveFixturePython)("monitoring: records and aggregates on two replicas", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;
  let alice: UserWithKey;
  let modelDir: string;
  const q = async (text: ReturnType<typeof sql>) => rowsOf(await b.services.db.execute(text));

  beforeAll(async () => {
    db = await createThrowawayDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-monitoring-"));
    // A flush every 10 minutes: what is in the tables came from the shutdown flush or an explicit one.
    const env = { DATABASE_URL: db.url, BUILDER_DATA_DIR: dataDir, MONITORING_FLUSH_MS: "600000", ...(await storageEnv()) };
    a = await startTestServer("pglite", env);
    b = await startTestServer("pglite", env);
    alice = await createUserWithKey(a);
    modelDir = fixtureWithBaseline();
    await publishFixture(a, alice.userId, 7, modelDir);
  });
  afterAll(async () => {
    await a?.teardown().catch(() => {});
    await b?.teardown();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(modelDir, { recursive: true, force: true });
  });

  it("sums both replicas' aggregates, keeps one small record per prediction, and never an input value", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await predict(i < 20 ? a : b, alice.key, 7, fixtureRow(i), i === 0 ? "client-chosen-id.1" : undefined);
      expect(r.status).toBe(201);
      ids.push(r.requestId);
    }
    expect(ids[0]).toBe("client-chosen-id.1");
    // One bad row: 400, nothing recorded for it.
    expect((await predict(a, alice.key, 7, [1, 2])).status).toBe(400);
    await b.services.monitoring.recorder.flush();
    await a.stop(); // the shutdown flush writes a's part

    const agg = await q(sql`select series, n::int as n, counts::text as counts from monitoring_aggregates order by series`);
    const bySeries = Object.fromEntries(agg.map((r) => [r.series, r]));
    expect(bySeries.predictions.n).toBe(30);
    expect(bySeries.latency.n).toBe(30);
    expect(bySeries.score.n).toBe(30);
    expect(bySeries["col:age"].n).toBe(30);
    // sex alternates 0/1: 15 each, no unknown code (the last bin).
    expect(bySeries["col:sex"].counts).toBe("{15,15,0}");
    expect(bySeries["col:site"].counts).toBe("{10,10,10,0}");
    // Binary: decisions per class sum to the count.
    const decisions = (bySeries.predictions.counts as string).slice(1, -1).split(",").map(Number);
    expect(decisions.reduce((x, y) => x + y, 0)).toBe(30);

    const records = await q(
      sql`select request_id, key_id, scores::text as scores, decision, pg_column_size(p.*) as bytes from prediction_records p`,
    );
    expect(records).toHaveLength(30);
    expect(new Set(records.map((r) => r.request_id))).toEqual(new Set(ids));
    expect(records.every((r) => r.key_id === alice.keyId)).toBe(true);
    expect(Math.max(...records.map((r) => r.bytes))).toBeLessThan(1024);
    // Nothing of the input: the record's columns are these and no more.
    const cols = await q(
      sql`select column_name from information_schema.columns where table_name = 'prediction_records' order by column_name`,
    );
    expect(cols.map((c) => c.column_name)).toEqual([
      "at",
      "decision",
      "experiment_uuid",
      "key_id",
      "label",
      "label_at",
      "model_id",
      "request_id",
      "scores",
    ]);
  });

  it("purges records older than PREDICTION_RETENTION_DAYS (190 by default) and keeps the rest", async () => {
    await q(sql`update prediction_records set at = now() - interval '191 days' where request_id = 'client-chosen-id.1'`);
    expect(await b.services.monitoring.purge()).toBe(1);
    expect((await q(sql`select count(*)::int as n from prediction_records`))[0].n).toBe(29);
  });

  it("deleting the experiment removes its records and aggregates", async () => {
    const res = await fetch(`${b.url}/v1/experiments/7`, { method: "DELETE", headers: bearer(alice.key) });
    expect(res.status).toBeLessThan(300);
    for (let i = 0; i < 100; i++) {
      if ((await q(sql`select count(*)::int as n from experiments`))[0].n === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await q(sql`select count(*)::int as n from prediction_records`))[0].n).toBe(0);
    expect((await q(sql`select count(*)::int as n from monitoring_aggregates`))[0].n).toBe(0);
  });
});
