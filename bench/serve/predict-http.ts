/**
 * HTTP /predict only, at the concurrencies given: the c=1 median and the throughput of each model kind, as one JSON
 * line on stdout (after the human-readable lines). Made for before/after comparisons of one change across two
 * checkouts (monitoring-ab.sh copies this file into the other checkout and alternates the two); run.ts measures far
 * more (in-process, maps, batching, soak) and takes much longer.
 *
 *   npx tsx bench/serve/predict-http.ts [--seconds 6] [--kinds vision,tabular] [--concurrency 1,8] [--label x] [--pg URL]
 *
 * --pg postgres://user@host/db: the server on a throwaway database made on that Postgres server (dropped after), as
 * compose runs it; without it the bench server's embedded PGlite, which runs its SQL on the server's own thread.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { startBenchServer, TABULAR_ROW } from "./bench-server.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const SECONDS = Number(opt("seconds", "6"));
const KINDS = opt("kinds", "vision,tabular").split(",");
const CONCURRENCY = opt("concurrency", "1,8").split(",").map(Number);
const LABEL = opt("label", "");
const PG = opt("pg", "");

/** A fresh database on the --pg server for this run; its URL, and a function that drops it. */
async function throwawayDatabase(admin: string) {
  const name = `bench_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

interface Done {
  latencies: number[];
  errors: number;
  seconds: number;
  firstError?: string;
}

async function main() {
  const ids: Record<string, number> = { vision: 1, detection: 2, tabular: 3, vision_resnet: 4 };
  const db = PG ? await throwawayDatabase(PG) : undefined;
  if (db) process.env.DATABASE_URL = db.url;
  const bench = await startBenchServer(Object.fromEntries(KINDS.map((k) => [k, ids[k]])));
  const { running, key, photo, client } = bench;
  const out: Array<{ kind: string; c: number; median: number; p99: number; rps: number; errors: number }> = [];
  for (const kind of KINDS) {
    const body = JSON.stringify({ message: kind === "tabular" ? TABULAR_ROW : photo });
    for (const c of CONCURRENCY) {
      const r = await new Promise<Done>((resolve) => {
        const onMessage = (m: Done & { type: string }) => {
          if (m.type !== "done") return;
          client.off("message", onMessage);
          resolve(m);
        };
        client.on("message", onMessage);
        client.send({ url: running.url, path: `/v1/experiments/${ids[kind]}/predict`, key, body, concurrency: c, seconds: SECONDS });
      });
      if (r.firstError) console.log(`  (first error: ${r.firstError})`);
      const s = [...r.latencies].sort((a, b) => a - b);
      const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN);
      const row = { kind, c, median: q(0.5), p99: q(0.99), rps: s.length / r.seconds, errors: r.errors };
      console.log(
        `${LABEL} ${kind} c=${c}: median ${row.median.toFixed(2)} ms  p99 ${row.p99.toFixed(2)} ms  ${row.rps.toFixed(1)} req/s  errors ${row.errors}`,
      );
      out.push(row);
    }
  }
  console.log(JSON.stringify({ label: LABEL, at: new Date().toISOString(), load: os.loadavg(), results: out }));
  await bench.close();
  await db?.drop();
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
