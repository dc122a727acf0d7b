/**
 * Issue 48, finding 3: what one user's chat costs every tenant once that user owns a large experiment, before and
 * after the fix, side by side. Prints figures, asserts nothing.
 *
 *   flock /tmp/builder-heavy.lock npx tsx bench/security/chat-stall.ts --before DIR [--after DIR] [--rounds 3]
 *     [--seconds 60] [--rate 132] [--rows 260000]
 *
 * DIR is a checkout's root (e.g. `git archive main | tar -x -C DIR` with node_modules linked in); --after defaults to
 * this checkout. Each side is its own server process (chat-stall-server.ts: PGlite, builtin chat, a key of 600
 * requests a minute, experiment 1 of --rows rows with an identifier-like column). Rounds alternate between the two
 * and only one side is busy at a time. Per round: 5 s of /healthz alone (the idle figure), then for --seconds the
 * key sends --rate chat messages a minute (one every 60/rate s, not waiting for the answers; the questions cycle
 * through QUESTIONS) while /healthz is asked again and again, one at a time, and besides every 100 ms whatever the
 * earlier answers (a sample uniform in time). Figures: /healthz median, p95 and max of each during the attack, the server's longest event-loop delay (its own monitor), the chat answers' median and max, its
 * RSS before the attack, at its peak and after. Before the rounds each side answers every question once, one at a
 * time (the first reads: the after side then keeps the model's manifest, without codes); those times are printed.
 */
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const args = process.argv.slice(2);
const opt = (name: string, dflt?: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const before = opt("before");
if (!before) throw new Error("--before DIR (a checkout of the commit to compare with) is required");
const after = opt("after", path.resolve(import.meta.dirname, "../.."))!;
const rounds = Number(opt("rounds", "3"));
const seconds = Number(opt("seconds", "60"));
const rate = Number(opt("rate", "132"));
const rows = Number(opt("rows", "260000"));

/** What a user asks: a greeting, the experiment's status, a definition, how to call it, a ranking, a list. */
const QUESTIONS = [
  "hello",
  "how is experiment 1 doing?",
  "what does AUC mean?",
  "how do I call predict for experiment 1?",
  "which of my models is best for AUC?",
  "list my experiments",
  "is my registry model good enough for clinic?",
  "what are the thresholds of experiment 1?",
];

interface Side {
  name: string;
  child: ChildProcess;
  url: string;
  key: string;
  plantS: number;
  warm: string;
}

async function startSide(name: string, root: string): Promise<Side> {
  const child = fork(path.join(import.meta.dirname, "chat-stall-server.ts"), [root, String(rows)], {
    execArgv: ["--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ url: string; key: string; plantS: number }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { url: string; key: string; plantS: number }));
    child.once("exit", (code) => reject(new Error(`${name} server exited (${code})`)));
  });
  return { name, child, ...ready, warm: "" };
}

/** Each question once, one at a time, before the rounds: the first reads (the after side keeps the model's manifest). */
async function warmUp(side: Side): Promise<string> {
  await ask(side, "mark");
  const ms: number[] = [];
  for (const m of QUESTIONS) ms.push((await chat(side, m)).ms);
  const { loopMaxMs } = await ask<{ loopMaxMs: number }>(side, "peak");
  return `warm-up, each question once: ${ms.map((x) => x.toFixed(0)).join(", ")} ms; loop max ${loopMaxMs.toFixed(0)} ms`;
}

const ask = <T>(side: Side, m: string) =>
  new Promise<T>((resolve) => {
    side.child.once("message", (r) => resolve(r as T));
    side.child.send(m);
  });

function healthz(url: string): Promise<number> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/healthz`, { agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(performance.now() - t));
      })
      .on("error", reject);
  });
}

function chat(side: Side, message: string): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  const body = JSON.stringify({ message });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${side.url}/v1/chat`,
      {
        method: "POST",
        agent: false,
        headers: { authorization: `Bearer ${side.key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, ms: performance.now() - t }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const q = (xs: number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;
const median = (xs: number[]) => q(xs, 0.5);
/** Not Math.max(...xs): a minute of one-at-a-time probes is 100k+ values, past the argument limit. */
const maxOf = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), -Infinity);

async function probe(url: string, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) out.push(await healthz(url));
  return out;
}

/**
 * /healthz asked every `every` ms whatever the earlier answers, for `ms`: a sample uniform in time, so its median is
 * what a tenant arriving at a random moment waits (the one-at-a-time loop's figures weigh quick moments by count).
 */
async function sampled(url: string, ms: number, every = 100): Promise<number[]> {
  const out: Array<Promise<number>> = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    out.push(healthz(url));
    await new Promise((r) => setTimeout(r, every));
  }
  return Promise.all(out);
}

async function round(side: Side) {
  const idle = await probe(side.url, 5000);
  const { rss: rssBefore } = await ask<{ rss: number }>(side, "mark");
  const answers: Array<Promise<{ status: number; ms: number }>> = [];
  const every = 60_000 / rate;
  const start = performance.now();
  let sent = 0;
  const timer = setInterval(() => {
    if (performance.now() - start >= seconds * 1000) return clearInterval(timer);
    answers.push(chat(side, QUESTIONS[sent++ % QUESTIONS.length]));
  }, every);
  const [during, uniform] = await Promise.all([probe(side.url, seconds * 1000), sampled(side.url, seconds * 1000)]);
  clearInterval(timer);
  const done = await Promise.all(answers);
  const { peak, loopMaxMs, rss } = await ask<{ peak: number; loopMaxMs: number; rss: number }>(side, "peak");
  const statuses: Record<string, number> = {};
  for (const a of done) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return {
    idleMedian: median(idle),
    median: median(during),
    p95: q(during, 0.95),
    max: maxOf(during),
    probes: during.length,
    uMedian: median(uniform),
    uP95: q(uniform, 0.95),
    uMax: maxOf(uniform),
    loopMaxMs,
    chatMedian: median(done.map((a) => a.ms)),
    chatMax: maxOf(done.map((a) => a.ms)),
    sent: done.length,
    statuses,
    rssBeforeMb: rssBefore / 2 ** 20,
    peakMb: peak / 2 ** 20,
    rssAfterMb: rss / 2 ** 20,
  };
}

const sides = [await startSide("before", before), await startSide("after", after)];
console.log(
  `before=${before} after=${after} rounds=${rounds} seconds=${seconds} rate=${rate}/min rows=${rows} node=${process.version} cpus=${os.cpus().length} load=${os.loadavg()[0].toFixed(1)}`,
);
for (const s of sides) console.log(`${s.name}: experiment of ${rows} rows planted in ${s.plantS.toFixed(1)} s; ${await warmUp(s)}`);
const results: Record<string, Array<Awaited<ReturnType<typeof round>>>> = { before: [], after: [] };
for (let r = 0; r < rounds; r++) {
  for (const side of r % 2 ? [...sides].reverse() : sides) {
    const x = await round(side);
    results[side.name].push(x);
    const f = (n: number) => n.toFixed(1);
    console.log(
      `round ${r + 1} ${side.name.padEnd(6)} /healthz idle ${f(x.idleMedian)} ms; during, every 100 ms: median ${f(x.uMedian)} p95 ${f(x.uP95)} max ${f(x.uMax)} ms; one at a time: median ${f(x.median)} p95 ${f(x.p95)} max ${f(x.max)} ms (${x.probes} probes); loop max ${f(x.loopMaxMs)} ms; chat ${x.sent} sent ${JSON.stringify(x.statuses)} median ${f(x.chatMedian)} max ${f(x.chatMax)} ms; RSS ${x.rssBeforeMb.toFixed(0)} / ${x.peakMb.toFixed(0)} / ${x.rssAfterMb.toFixed(0)} MB; load ${os.loadavg()[0].toFixed(1)}`,
    );
  }
}
console.log("\nmedians over rounds");
console.log(
  "side    /healthz idle   during, every 100 ms: median / p95 / max   one at a time: median / p95 / max   loop max   chat median / max   RSS before / peak / after (MB)",
);
for (const s of sides) {
  const rs = results[s.name];
  const m = (k: keyof (typeof rs)[number]) => median(rs.map((x) => x[k] as number));
  console.log(
    `${s.name.padEnd(7)} ${m("idleMedian").toFixed(1).padStart(8)} ms   ${[m("uMedian"), m("uP95"), m("uMax")]
      .map((v) => v.toFixed(1))
      .join(" / ")
      .padEnd(38)} ms ${[m("median"), m("p95"), m("max")]
      .map((v) => v.toFixed(1))
      .join(" / ")
      .padEnd(
        30,
      )} ms ${m("loopMaxMs").toFixed(0).padStart(6)} ms ${m("chatMedian").toFixed(0).padStart(8)} / ${m("chatMax").toFixed(0)} ms   ${m("rssBeforeMb").toFixed(0)} / ${m("peakMb").toFixed(0)} / ${m("rssAfterMb").toFixed(0)}`,
  );
}
for (const s of sides) {
  const exited = new Promise((resolve) => s.child.once("exit", resolve));
  s.child.send("stop");
  await exited;
}
process.exit(0);
