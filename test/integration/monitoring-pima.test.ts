import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { storageEnv } from "../helpers/storage.js";
import { api } from "./experiments-fixtures.js";
import { buildPimaModel, havePimaRows, PIMA_COLS, pimaRows } from "./pima-model.js";

// Issue 49's "done when" for tables, through the real pipeline: a Pima model is built (its manifest carries the
// monitoring baseline), two replicas serve 2,000 predictions of which the second half has glucose +30 mg/dL,
// outcomes come back for 60 %, and one replica is restarted. The monitoring API then shows drift on glucose and
// on no unshifted column, the realized figures with intervals, the estimate for the other 40 %, and every count
// summed across the replicas and the restart. A planted input value is found nowhere in the data folder or database.

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

/** A value no Pima row has, sent once as a BMI: it must not be stored anywhere. */
const PLANTED = 77.123457;

describe.skipIf(!process.env.TEST_DATABASE_URL || !havePimaRows)("monitoring a Pima model on two replicas", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let dataDir: string;
  let env: Record<string, string>;
  let a: TestServer;
  let b: TestServer;
  let user: UserWithKey;
  const rows = pimaRows();

  beforeAll(async () => {
    db = await createThrowawayDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-monitoring-pima-"));
    env = { DATABASE_URL: db.url, BUILDER_DATA_DIR: dataDir, MONITORING_FLUSH_MS: "500", ...(await storageEnv()) };
    a = await startTestServer("pglite", env);
    b = await startTestServer("pglite", env);
    user = await createUserWithKey(a, { rateLimitPerMinute: 100_000 });
    await buildPimaModel(a, user, rows);
  });
  afterAll(async () => {
    await a?.teardown().catch(() => {});
    await b?.teardown();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const predictOn = async (s: TestServer, message: number[]) => {
    const res = await fetch(`${s.url}/v1/experiments/1/predict`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    expect(res.status).toBe(201);
    await res.arrayBuffer();
    return res.headers.get("x-request-id")!;
  };

  it("shows drift on glucose only, realized figures for the 60 % with outcomes, the estimate for the rest, summed over replicas and a restart", async () => {
    const baseline = (await a.services.serving.repo.latest(user.userId, 1))!.manifest as any;
    expect(baseline.monitoring_baseline.columns.map((c: any) => c.name)).toEqual(PIMA_COLS);

    const sent: Array<{ id: string; label: number }> = [];
    for (let start = 0; start < 2000; start += 20) {
      const batch = Array.from({ length: 20 }, (_, k) => start + k);
      const ids = await Promise.all(
        batch.map((i) => {
          const r = rows[i % rows.length];
          const message = r.slice(0, 8);
          if (i >= 1000) message[1] += 30;
          if (i === 1500) message[5] = PLANTED;
          return predictOn(i % 2 ? b : a, message);
        }),
      );
      ids.forEach((id, k) => sent.push({ id, label: rows[batch[k] % rows.length][8] }));
    }
    // A restart of replica a: its shutdown writes what it held; the new process serves on the same database.
    await a.stop();
    a = await startTestServer("pglite", env);

    // Outcomes for 60 %, every fifth prediction and three of the other four skipped alike in both halves.
    const labelled = sent.filter((_, i) => i % 5 < 3);
    for (let i = 0; i < labelled.length; i += 500) {
      const res = await api(b.url, user.key).post(
        "/v1/models/1/outcomes",
        labelled.slice(i, i + 500).map((s) => ({ request_id: s.id, label: String(s.label) })),
      );
      expect(res.status).toBe(200);
      expect(res.body.unmatched).toEqual([]);
    }

    const r = (await api(a.url, user.key).get("/v1/models/1/monitoring")).body;
    expect(r.predictions).toBe(2000);
    const byName = Object.fromEntries(r.drift.features.map((f: any) => [f.feature, f]));
    expect(byName.Glucose).toMatchObject({ drifted: true, n: 2000, test: "psi" });
    expect(["medium", "high"]).toContain(byName.Glucose.severity);
    for (const c of PIMA_COLS.filter((c) => c !== "Glucose")) expect(byName[c], c).toMatchObject({ drifted: false, n: 2000 });
    expect(r.drift.status).toBe("drift");
    expect(r.drift.features[0].feature).toBe("Glucose"); // the worst first

    expect(r.outcomes).toMatchObject({ records: 2000, labelled: 1200, coverage: 0.6 });
    const real = r.performance.realized;
    expect(real.n).toBe(1200);
    for (const k of ["sensitivity", "specificity", "ppv", "npv", "auc"]) {
      expect(real[k].value, k).toBeGreaterThan(0.3);
      expect(real[k].ci_low, k).toBeLessThan(real[k].value);
      expect(real[k].ci_high, k).toBeGreaterThan(real[k].value);
    }
    expect(r.performance.model_card.sensitivity.value).toBeGreaterThan(0);
    expect(r.performance.estimated).toMatchObject({ estimate: true, n: 800 });
    expect(r.performance.estimated.sensitivity).toBeGreaterThan(0);
    expect(r.decisions.baseline_positive_rate).toBeGreaterThan(0);
  });

  it("keeps the planted input value nowhere: not in the data folder, not in any table", async () => {
    await a.services.monitoring.recorder.flush();
    await b.services.monitoring.recorder.flush();
    const needle = String(PLANTED);
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile() && fs.readFileSync(p).includes(needle)) files.push(p);
      }
    };
    walk(dataDir);
    expect(files).toEqual([]);
    const tables = (await b.services.db.execute(sql`select tablename from pg_tables where schemaname = 'public'`)) as unknown as {
      rows: Array<{ tablename: string }>;
    };
    const hits: string[] = [];
    for (const { tablename } of tables.rows) {
      const r = (await b.services.db.execute(
        sql.raw(`select count(*)::int as n from "${tablename}" t where t::text like '%${needle}%'`),
      )) as unknown as { rows: Array<{ n: number }> };
      if (r.rows[0].n) hits.push(tablename);
    }
    expect(hits).toEqual([]);
  });
});
