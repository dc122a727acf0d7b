/**
 * Issue 48, findings 4 and 5: what one batch file costs the server, and how long another user's batch waits behind
 * one user's files, before and after the fix, side by side. Prints figures, asserts nothing.
 *
 *   flock /tmp/builder-heavy.lock npx tsx bench/security/batch-bombs.ts --before DIR [--after DIR] [--rounds 3]
 *     [--scenarios xlsx-bomb,long-line,fair-bombs,fair-large]
 *
 * DIR is a checkout's root (e.g. `git archive <commit> | tar -x -C DIR` with node_modules and pipelines/.venv linked
 * in); --after defaults to this checkout. Each side is its own server process (batch-server-child.ts); rounds
 * alternate between the two and only one side is busy at a time. Per scenario and round, /healthz is asked again
 * and again, one at a time, until the scenario ends; the figures are the slowest /healthz answer, the server's
 * longest event-loop delay (its own monitor), its RSS before, at its peak and after, and the scenario's own times:
 *   xlsx-bomb   user a sends a 172 KiB .xlsx whose 10,000 rows share one 30,000-character id (the issue's 308 KB
 *               file made 301 MB of results.csv): time to done/failed, results.csv's size
 *   long-line   user a sends a 500 MB CSV of one line (the header, one row, then the line): time to done/failed
 *   fair-bombs  user a sends three of the xlsx-bomb files, then user b a 10-row CSV: b's wait (sent -> done)
 *   fair-large  user a sends three 100,000-row CSVs (legitimate, ~10 s each), then user b a 10-row CSV: b's wait
 */
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { csvWithLongLine, patientsCsv, xlsxRepeatedId } from "../../test/helpers/hostile-batches.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt?: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const before = opt("before");
if (!before) throw new Error("--before DIR (a checkout of the commit to compare with) is required");
const after = opt("after", path.resolve(import.meta.dirname, "../.."))!;
const rounds = Number(opt("rounds", "3"));
const only = opt("scenarios")?.split(",");

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

interface Side {
  name: string;
  child: ChildProcess;
  url: string;
  keys: Record<"a" | "b", string>;
}

async function startSide(name: string, root: string): Promise<Side> {
  const child = fork(path.join(import.meta.dirname, "batch-server-child.ts"), [root], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ url: string; keys: Side["keys"] }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { url: string; keys: Side["keys"] }));
    child.once("exit", (code) => reject(new Error(`${name} server exited (${code})`)));
  });
  return { name, child, ...ready };
}

const ask = <T>(side: Side, m: string) =>
  new Promise<T>((resolve) => {
    side.child.once("message", (r) => resolve(r as T));
    side.child.send(m);
  });

function request(
  url: string,
  opts: { method?: string; key?: string; type?: string; body?: Buffer | string; file?: string },
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    if (opts.type) headers["content-type"] = opts.type;
    if (opts.file) headers["content-length"] = String(fs.statSync(opts.file).size);
    const req = http.request(url, { method: opts.method ?? "GET", agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    if (opts.file) fs.createReadStream(opts.file).pipe(req);
    else req.end(opts.body);
  });
}

/** Bytes of a download, counted as they arrive (results.csv may be hundreds of MB). */
function downloadSize(url: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false, headers: { authorization: `Bearer ${key}` } }, (res) => {
        let n = 0;
        res.on("data", (c: Buffer) => (n += c.length));
        res.on("end", () => resolve(res.statusCode === 200 ? n : 0));
      })
      .on("error", reject);
  });
}

function healthz(url: string): Promise<number> {
  const start = performance.now();
  return new Promise((resolve) => {
    http
      .get(`${url}/healthz`, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(performance.now() - start));
      })
      .on("error", () => resolve(Number.NaN));
  });
}

interface BatchView {
  batch_id: string;
  status: string;
  failure_reason: string | null;
}

async function send(side: Side, who: "a" | "b", type: string, input: { body?: Buffer | string; file?: string }) {
  const sent = performance.now();
  const res = await request(`${side.url}/v1/models/1/batch`, { method: "POST", key: side.keys[who], type, ...input });
  if (res.status !== 202) throw new Error(`${side.name}: POST batch answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
  return { id: (JSON.parse(res.body.toString()) as BatchView).batch_id, who, sent };
}

async function finished(side: Side, batch: { id: string; who: "a" | "b"; sent: number }) {
  for (;;) {
    const res = await request(`${side.url}/v1/batches/${batch.id}`, { key: side.keys[batch.who] });
    const view = JSON.parse(res.body.toString()) as BatchView;
    if (view.status === "done" || view.status === "failed") return { ...view, ms: performance.now() - batch.sent };
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Outcome {
  /** The scenario's own figure (ms) and what it is. */
  ms: number;
  what: string;
  note: string;
}

/** Runs the scenario while probing /healthz; returns its figures with the server's. */
async function measure(side: Side, scenario: (side: Side) => Promise<Outcome>) {
  const { rss: rssBefore } = await ask<{ rss: number }>(side, "mark");
  let done = false;
  const work = scenario(side).finally(() => (done = true));
  let worst = 0;
  while (!done) worst = Math.max(worst, await healthz(side.url));
  const outcome = await work;
  const { peak, loopMaxMs, rss } = await ask<{ peak: number; loopMaxMs: number; rss: number }>(side, "peak");
  return { ...outcome, healthzMs: worst, loopMaxMs, rssBeforeMb: rssBefore / 2 ** 20, peakMb: peak / 2 ** 20, rssAfterMb: rss / 2 ** 20 };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "batch-bombs-"));
const bomb = xlsxRepeatedId({ rows: 10_000, idChars: 30_000 });
const longLine = path.join(tmp, "long-line.csv");
const large = patientsCsv(100_000);
const small = patientsCsv(10);

const scenarios: Record<string, (side: Side) => Promise<Outcome>> = {
  "xlsx-bomb": async (side) => {
    const b = await finished(side, await send(side, "a", XLSX, { body: bomb }));
    const size = b.status === "done" ? await downloadSize(`${side.url}/v1/batches/${b.batch_id}/results.csv`, side.keys.a) : 0;
    return {
      ms: b.ms,
      what: "to done/failed",
      note: `${b.status}; results.csv ${(size / 1e6).toFixed(1)} MB${b.failure_reason ? `; ${b.failure_reason.slice(0, 70)}` : ""}`,
    };
  },
  "long-line": async (side) => {
    const b = await finished(side, await send(side, "a", "text/csv", { file: longLine }));
    return { ms: b.ms, what: "to done/failed", note: `${b.status}${b.failure_reason ? `; ${b.failure_reason.slice(0, 70)}` : ""}` };
  },
  "fair-bombs": async (side) => fair(side, XLSX, bomb),
  "fair-large": async (side) => fair(side, "text/csv", large),
};

async function fair(side: Side, type: string, body: Buffer | string): Promise<Outcome> {
  const mine = [];
  for (let i = 0; i < 3; i++) mine.push(await send(side, "a", type, { body }));
  const sent = await send(side, "b", "text/csv", { body: small });
  // all four followed at once, so each one's time is when it ended, not when it was looked at
  const [theirs, ...a] = await Promise.all([finished(side, sent), ...mine.map((m) => finished(side, m))]);
  return {
    ms: theirs.ms,
    what: "b's wait",
    note: `b ${theirs.status}; a's three, sent -> ${a[0].status}: ${a.map((x) => `${(x.ms / 1000).toFixed(1)} s`).join(", ")}`,
  };
}

const selected = Object.keys(scenarios).filter((s) => !only || only.includes(s));
if (selected.includes("long-line")) csvWithLongLine(longLine, 500 * 1024 * 1024);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sides = [await startSide("before", before), await startSide("after", after)];
console.log(
  `before=${before} after=${after} rounds=${rounds} node=${process.version} cpus=${os.cpus().length} load=${os.loadavg()[0].toFixed(1)}`,
);
console.log(
  "scenario    side    figure (median, min-max)            /healthz worst   loop max   RSS before / peak / after (MB)   last round",
);
try {
  for (const name of selected) {
    const results = new Map<string, Awaited<ReturnType<typeof measure>>[]>(sides.map((s) => [s.name, []]));
    for (let r = 0; r < rounds; r++) for (const side of sides) results.get(side.name)!.push(await measure(side, scenarios[name]));
    for (const side of sides) {
      const rs = results.get(side.name)!;
      const ms = rs.map((x) => x.ms);
      const figure = `${rs[0].what} ${(median(ms) / 1000).toFixed(2)} s (${(Math.min(...ms) / 1000).toFixed(2)}-${(Math.max(...ms) / 1000).toFixed(2)})`;
      const mb = (k: "rssBeforeMb" | "peakMb" | "rssAfterMb") => median(rs.map((x) => x[k])).toFixed(0);
      console.log(
        `${name.padEnd(11)} ${side.name.padEnd(7)} ${figure.padEnd(36)} ${median(rs.map((x) => x.healthzMs))
          .toFixed(0)
          .padStart(8)} ms ${median(rs.map((x) => x.loopMaxMs))
          .toFixed(0)
          .padStart(7)} ms   ${`${mb("rssBeforeMb")} / ${mb("peakMb")} / ${mb("rssAfterMb")}`.padEnd(31)}  ${rs.at(-1)!.note}`,
      );
    }
  }
} finally {
  for (const side of sides) side.child.send("stop");
  fs.rmSync(tmp, { recursive: true, force: true });
}
