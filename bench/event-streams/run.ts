// Events-stream benchmark (issue 42, finding 5): starts `./builder serve` of a checkout as its own process on a
// throwaway Postgres database, makes one experiment that stays queued (BullMQ runner, a queue no worker reads),
// opens N `GET /v1/experiments/{id}/events` streams with one key, and then for a window of seconds measures:
// the server process's CPU (utime + stime from /proc) and that of the Postgres backends serving its database, /healthz latency (one request every 50 ms, in sequence),
// and the scans of the experiment_events table (pg_stat_user_tables, flushed by Postgres about once a second, so
// approximate). Prints one JSON line of figures; asserts nothing.
//   node --import tsx bench/event-streams/run.ts [--root DIR] [--streams 500] [--seconds 20] [--env K=V ...]
// --root: the checkout whose ./builder runs (default this one), so main and a branch compare with one script.
// Needs TEST_DATABASE_URL (an admin URL of a Postgres) and TEST_REDIS_URL.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : fallback;
};
const extraEnv = Object.fromEntries(argv.flatMap((a, i) => (argv[i - 1] === "--env" ? [a.split(/=(.*)/s).slice(0, 2)] : [])));
const ROOT = path.resolve(arg("root", path.join(path.dirname(fileURLToPath(import.meta.url)), "../..")));
const STREAMS = Number(arg("streams", "500"));
const SECONDS = Number(arg("seconds", "20"));
const ADMIN = process.env.TEST_DATABASE_URL ?? "";
const REDIS = process.env.TEST_REDIS_URL ?? "";
if (!ADMIN || !REDIS) throw new Error("set TEST_DATABASE_URL and TEST_REDIS_URL");

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

/** CPU seconds (user + system) the process has used: fields 14 and 15 of /proc/<pid>/stat, in clock ticks. */
const cpuSeconds = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/** One open stream: an http request whose response we keep reading (and discard). */
function openStream(port: number, key: string, urlPath: string): Promise<{ status: number; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path: urlPath, agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on("error", reject);
  });
}

async function main() {
  const dbName = `bench_streams_${Date.now()}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(ADMIN);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-streams-"));
  const env = {
    ...process.env,
    BUILDER_DATA_DIR: dataDir,
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL: REDIS,
    BUILDER_RUNNER: "bullmq",
    BULLMQ_QUEUE: `bench-streams-${randomBytes(3).toString("hex")}`,
    RATE_LIMIT_KEY_PREFIX: `bench-streams:${randomBytes(3).toString("hex")}`,
    RATE_LIMIT_PER_MINUTE: "100000",
    LOG_LEVEL: "warn",
    GCS_BUCKET: "",
    ...extraEnv,
  };
  const builder = path.join(ROOT, "builder");
  const cli = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const p = spawn(builder, args, { env, cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      p.stdout.on("data", (c) => (out += c));
      p.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(" ")}: exit ${code}`))));
    });
  await cli(["migrate"]);
  await cli(["users", "create", "--email", "bench@example.org", "--password", "bench-password-123"]);
  const key = (await cli(["keys", "create", "--email", "bench@example.org"])).trim().split("\n").pop()!;
  const port = await freePort();
  const server = spawn(builder, ["serve"], {
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const streams: Array<{ close: () => void }> = [];
  try {
    for (
      let t = 0;
      !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      ));
      t++
    ) {
      if (t > 300) throw new Error("the server did not start");
      await new Promise((r) => setTimeout(r, 200));
    }
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const me = (await (await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: auth })).json()) as { user_id: string };
    const body = {
      zip_gcloud: `${me.user_id}/none/d.zip`,
      label_cols: ["y"],
      data_cols: ["x"],
      model_type: 0,
      optimization_type: 1,
      experiment_id: 1,
      user_id: me.user_id,
      study_type: "Builder",
      task: "data",
      optimization_metric: "AUC",
    };
    const posted = await fetch(`http://127.0.0.1:${port}/v1/experiments`, { method: "POST", headers: auth, body: JSON.stringify(body) });
    if (posted.status !== 202) throw new Error(`POST /v1/experiments: ${posted.status} ${await posted.text()}`);

    const statuses: Record<number, number> = {};
    for (let i = 0; i < STREAMS; i++) {
      const s = await openStream(port, key, "/v1/experiments/1/events");
      statuses[s.status] = (statuses[s.status] ?? 0) + 1;
      if (s.status === 200) streams.push(s);
      else s.close();
    }
    // Let the replays finish, and let Postgres flush their scan counters: an idle backend flushes after up to 10 s,
    // so with a shorter wait the opening reads land in the window (a first version of this script counted them).
    await new Promise((r) => setTimeout(r, 12_000));

    const stats = new pg.Client({ connectionString: dbUrl.toString() });
    await stats.connect();
    const scans = async () => {
      const r = await stats.query(
        `select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as n from pg_stat_user_tables where relname = 'experiment_events'`,
      );
      return Number(r.rows[0]?.n ?? 0);
    };
    const pid = server.pid!;
    // The database's side of the polling: the CPU of the Postgres backends serving this database (same host).
    const backends = (
      await stats.query(`select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [dbName])
    ).rows.map((r) => Number(r.pid));
    const dbCpu = () => backends.reduce((sum, p) => sum + (fs.existsSync(`/proc/${p}/stat`) ? cpuSeconds(p) : 0), 0);
    const db0 = dbCpu();
    const cpu0 = cpuSeconds(pid);
    const scans0 = await scans();
    const t0 = Date.now();
    const latencies: number[] = [];
    while (Date.now() - t0 < SECONDS * 1000) {
      const s = performance.now();
      await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.arrayBuffer());
      latencies.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 50));
    }
    const elapsed = (Date.now() - t0) / 1000;
    const cpu = (cpuSeconds(pid) - cpu0) / elapsed;
    const pgCpu = (dbCpu() - db0) / elapsed;
    await new Promise((r) => setTimeout(r, 1500)); // the server's backends flush their table counters about once a second
    const scanRate = ((await scans()) - scans0) / elapsed;
    await stats.end();
    const ms = (x: number) => x.toFixed(1);
    console.log(
      JSON.stringify({
        root: ROOT,
        env: extraEnv,
        streams_asked: STREAMS,
        statuses,
        window_s: Math.round(elapsed),
        server_cpu_cores: Number(cpu.toFixed(3)),
        postgres_backends: backends.length,
        postgres_cpu_cores: Number(pgCpu.toFixed(3)),
        event_table_scans_per_s: Number(scanRate.toFixed(1)),
        healthz_ms: {
          n: latencies.length,
          p50: ms(quantile(latencies, 0.5)),
          p99: ms(quantile(latencies, 0.99)),
          max: ms(Math.max(...latencies)),
        },
        loadavg_1m: Number(os.loadavg()[0]!.toFixed(2)),
        cpus: os.cpus().length,
      }),
    );
  } finally {
    for (const s of streams) s.close();
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
