import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { storageEnv } from "../helpers/storage.js";
import { RECORD_CHUNK } from "../../src/monitoring/repository.js";
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

  it("writes a flush past one chunk once, whatever a request id holds, and leaves out a version that is gone", async () => {
    const [model] = await q(sql`select id from models`);
    const odd = ['quote"d', "back\\slash", "com,ma", "{brace}", "sp ace", "NULL", "ñandú"];
    const records = Array.from({ length: RECORD_CHUNK * 2 + 500 }, (_, i) => ({
      modelId: model.id as string,
      requestId: i < odd.length ? odd[i] : `bulk-${i}`,
      at: Date.now(),
      keyId: i % 2 ? alice.keyId : null,
      scores: i === 0 ? [Number.NaN, 0.25] : [0.5, 0.5],
      decision: i === 0 ? null : 1,
    }));
    const gone = { ...records[1], modelId: "00000000-0000-4000-8000-000000000000", requestId: "of-a-deleted-version" };
    const repo = b.services.monitoring.repo;
    await repo.write([], [...records, gone]);
    await repo.write([], records); // a retried flush: nothing twice
    // The ids as a Postgres array literal (JSON's escaping of quote and backslash is the literal's).
    const idList = `{${records.map((r) => JSON.stringify(r.requestId)).join(",")}}`;
    const written = await q(
      sql`select request_id, key_id, scores::text as scores, decision from prediction_records where request_id = any(${idList}::text[])`,
    );
    expect(written).toHaveLength(records.length);
    const byId = new Map(written.map((r) => [r.request_id as string, r]));
    for (const id of odd) expect(byId.has(id)).toBe(true);
    expect(byId.get(odd[0])).toMatchObject({ scores: "{NULL,0.25}", decision: null, key_id: null });
    expect(byId.get(odd[1])).toMatchObject({ scores: "{0.5,0.5}", decision: 1, key_id: alice.keyId });
    expect((await q(sql`select count(*)::int as n from prediction_records where request_id = 'of-a-deleted-version'`))[0].n).toBe(0);
    await q(sql`delete from prediction_records where request_id = any(${idList}::text[])`);
  });

  it("takes outcomes by request id: every bad row named and nothing written, unmatched ids listed, idempotent", async () => {
    const ids = (await q(sql`select request_id from prediction_records order by request_id`)).map((r) => r.request_id as string);
    const post = (body: unknown) =>
      fetch(`${b.url}/v1/models/7/outcomes`, {
        method: "POST",
        headers: bearer(alice.key, { "content-type": "application/json" }),
        body: JSON.stringify(body),
      });
    const bad = await post([
      { request_id: ids[0], label: "1" },
      { request_id: ids[1], label: "maybe" },
    ]);
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as any;
    expect(badBody.error.details).toEqual([
      expect.objectContaining({ field: "1.label", message: expect.stringContaining("not one of this model's labels (0, 1)") }),
    ]);
    expect((await q(sql`select count(*)::int as n from prediction_records where label is not null`))[0].n).toBe(0);

    const rows = ids.slice(0, 20).map((id, i) => ({ request_id: id, label: i % 2 ? "1" : "0" }));
    const ok = await post([...rows, { request_id: "never-made", label: "risk-1" }]);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ received: 21, matched: 20, unmatched: ["never-made"] });
    const again = await post(rows);
    expect(await again.json()).toEqual({ received: 20, matched: 20, unmatched: [] });
    expect((await q(sql`select count(*)::int as n from prediction_records where label is not null`))[0].n).toBe(20);
    // Too many at once: refused, naming the limit.
    const many = await post(Array.from({ length: 10_001 }, (_, i) => ({ request_id: `r${i}`, label: "0" })));
    expect(many.status).toBe(400);
    expect(JSON.stringify(await many.json())).toContain("at most 10000 outcomes per call");
    // Another user's model is not found.
    const bob = await createUserWithKey(b);
    const other = await fetch(`${b.url}/v1/models/7/outcomes`, {
      method: "POST",
      headers: bearer(bob.key, { "content-type": "application/json" }),
      body: JSON.stringify(rows),
    });
    expect(other.status).toBe(404);
  });

  it("reports volume, decisions, drift against the baseline and realized figures with intervals", async () => {
    const res = await fetch(`${b.url}/v1/models/7/monitoring`, { headers: bearer(alice.key) });
    expect(res.status).toBe(200);
    const r = (await res.json()) as any;
    expect(r.predictions).toBe(30);
    expect(r.per_hour.reduce((s: number, h: any) => s + h.predictions, 0)).toBe(30);
    expect(r.decisions.baseline_positive_rate).toBe(0.3);
    expect(r.drift.features.map((f: any) => f.feature).sort()).toEqual(["age", "bmi", "score", "sex", "site"]);
    // 30 predictions: a significance test on the small window.
    const age = r.drift.features.find((f: any) => f.feature === "age");
    expect(age).toMatchObject({ n: 30, baseline_n: 1000, test: "ks" });
    expect(r.outcomes).toMatchObject({ records: 30, labelled: 20 });
    expect(r.performance.realized.n).toBe(20);
    const sens = r.performance.realized.sensitivity;
    expect(sens.ci_low).toBeLessThanOrEqual(sens.value);
    expect(sens.ci_high).toBeGreaterThanOrEqual(sens.value);
    expect(r.performance.estimated).toMatchObject({ estimate: true, n: 10 });
    expect(r.retention_days).toBe(190);
    const bad = await fetch(`${b.url}/v1/models/7/monitoring?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`, {
      headers: bearer(alice.key),
    });
    expect(bad.status).toBe(400);
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
