/**
 * What monitoring costs the server's own thread, apart from HTTP: N calls of the recorder's record() (a tabular
 * prediction's observation: scores, decision, a 4-column row), then one flush of them, on the bench server's
 * database (the embedded PGlite, whose SQL runs on this same thread, or --pg for a Postgres server). Prints the time
 * per record() and the flush's wall time, and the longest the event loop was blocked during the flush.
 *
 *   npx tsx bench/serve/monitoring-flush.ts [--n 50000] [--pg postgres://postgres@127.0.0.1:5432/postgres]
 */
import { randomBytes } from "node:crypto";
import { newRequestId } from "../../src/monitoring/request-id.js";
import pg from "pg";
import { startBenchServer, TABULAR_ROW } from "./bench-server.js";
import { personalScope } from "../../src/workspaces/scope.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const N = Number(opt("n", "50000"));
const PG = opt("pg", "");

async function main() {
  let drop = async () => {};
  if (PG) {
    const name = `bench_${randomBytes(6).toString("hex")}`;
    const c = new pg.Client({ connectionString: PG });
    await c.connect();
    await c.query(`create database ${name}`);
    await c.end();
    const url = new URL(PG);
    url.pathname = `/${name}`;
    process.env.DATABASE_URL = url.toString();
    drop = async () => {
      const d = new pg.Client({ connectionString: PG });
      await d.connect();
      await d.query(`drop database if exists ${name} with (force)`);
      await d.end();
    };
  }
  process.env.MONITORING_FLUSH_MS = "3600000"; // only the flush below
  const bench = await startBenchServer({ tabular: 3 });
  const { services, user } = bench;
  const model = await services.serving.model(await personalScope(services.db, user.id), 3);
  const recorded = { id: model.row.id, experimentUuid: model.row.experimentUuid, manifest: model.manifest };
  const row = Float32Array.from(TABULAR_ROW);
  const rec = services.monitoring.recorder;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++)
      rec.record(recorded, { requestId: newRequestId(), scores: [0.3, 0.7], decision: 1, latencyMs: 0.1, inputCheck: "unchecked", row });
    const perRecord = ((performance.now() - t0) * 1000) / N;
    // The longest gap between 1 ms timer ticks while the flush runs, read after one more tick (a histogram read at
    // once would miss a block that lasts until the flush ends: PGlite's SQL runs synchronously on this thread).
    let last = performance.now();
    let blocked = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      blocked = Math.max(blocked, now - last);
      last = now;
    }, 1);
    const t1 = performance.now();
    await rec.flush();
    const flushMs = performance.now() - t1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    clearInterval(tick);
    console.log(
      `${PG ? "postgres" : "pglite"} round ${round + 1}: record() ${perRecord.toFixed(2)} µs each (the request id made included); flush of ${N} records ${flushMs.toFixed(0)} ms, event loop blocked at most ${blocked.toFixed(0)} ms`,
    );
  }
  await bench.close();
  await drop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
