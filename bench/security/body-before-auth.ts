/**
 * Issue 42, finding 1: how long one request's body holds the server's event loop, seen from outside as the delay of
 * /healthz, before and after the fix, side by side. Prints figures, asserts nothing.
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/security/body-before-auth.ts --before DIR [--after DIR] [--rounds 5]
 *
 * DIR is a checkout's root (`git worktree add --detach /tmp/before <commit>` with node_modules linked in); --after
 * defaults to this checkout. Each side runs in its own process (server-child.ts); rounds alternate between the two
 * and only one side is busy at a time. Per scenario and round: the big request is sent (its bytes built once, in
 * this process) while /healthz is asked again and again, one at a time, until the big answer is in; the round's
 * figure is the slowest /healthz answer. Medians over rounds are printed, with the big request's own time, its
 * status and the server's peak RSS. The bodies:
 *   unauth-zeros    no Authorization, {"message":[0,0,...]} of 13.7 M zeros (27.4 MB, the body)
 *   auth-zeros      the same with a valid key (the largest body an authenticated caller could send before)
 *   auth-string     a valid key, one data: URI string filling the body limit (base64 of FETCH_MAX_BYTES)
 *   unauth-x40      40 parallel unauthenticated 27 MB string bodies (the RSS growth)
 */
import { fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";

const args = process.argv.slice(2);
const opt = (name: string, dflt?: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const before = opt("before");
if (!before) throw new Error("--before DIR (a checkout of the commit to compare with) is required");
const after = opt("after", path.resolve(import.meta.dirname, "../.."))!;
const rounds = Number(opt("rounds", "5"));
const only = opt("scenarios")?.split(",");

interface Side {
  name: string;
  child: ChildProcess;
  url: string;
  key: string;
}

async function startSide(name: string, root: string): Promise<Side> {
  const child = fork(path.join(import.meta.dirname, "server-child.ts"), [root], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { url: string; key: string }));
    child.once("exit", (code) => reject(new Error(`${name} server exited (${code})`)));
  });
  return { name, child, ...ready };
}

const ask = <T>(side: Side, m: string) =>
  new Promise<T>((resolve) => {
    side.child.once("message", (r) => resolve(r as T));
    side.child.send(m);
  });

/** POSTs the body; resolves with the status and milliseconds once the whole answer is in (or the socket closes). */
function post(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve) => {
    const req = http.request(`${url}/v1/experiments/1/predict`, {
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json", "content-length": String(body.length), connection: "close", ...headers },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, ms: performance.now() - start }));
    });
    // A server that answers before reading may close while the body is still going out: the answer counts.
    req.on("error", () => resolve({ status: -1, ms: performance.now() - start }));
    req.end(body);
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

async function round(side: Side, body: Buffer, authed: boolean, parallel: number) {
  await ask(side, "peak");
  const headers: Record<string, string> = authed ? { authorization: `Bearer ${side.key}` } : {};
  let done = false;
  const big = Promise.all(Array.from({ length: parallel }, () => post(side.url, body, headers))).finally(() => (done = true));
  let worst = 0;
  while (!done) worst = Math.max(worst, await healthz(side.url));
  const answers = await big;
  const { peak } = await ask<{ peak: number }>(side, "peak");
  return {
    healthzMs: worst,
    bigMs: Math.max(...answers.map((a) => a.ms)),
    statuses: [...new Set(answers.map((a) => a.status))].join("/"),
    peakMb: peak / 2 ** 20,
  };
}

const limit = Math.ceil((20 * 1024 * 1024 * 4) / 3) + 64 * 1024 - 1024; // the predict body limit at the default FETCH_MAX_BYTES, less room
const zeros = Buffer.from(`{"message":[${"0,".repeat(13_700_000 - 1)}0]}`);
const prefix = '{"message":"data:image/png;base64,';
const bigString = Buffer.from(prefix + "A".repeat(limit - prefix.length - 2) + '"}');
const scenarios = [
  { name: "unauth-zeros", body: zeros, authed: false, parallel: 1 },
  { name: "auth-zeros", body: zeros, authed: true, parallel: 1 },
  { name: "auth-string", body: bigString, authed: true, parallel: 1 },
  { name: "unauth-x40", body: Buffer.from(`{"message":"${"A".repeat(27_000_000)}"}`), authed: false, parallel: 40 },
].filter((s) => !only || only.includes(s.name));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sides = [await startSide("before", before), await startSide("after", after)];
console.log(`before=${before} after=${after} rounds=${rounds} node=${process.version} cpus=${(await import("node:os")).cpus().length}`);
console.log("scenario      side    status   /healthz worst (median, min-max)   big request (median)   peak RSS (median)");
for (const s of scenarios) {
  const results = new Map<string, Awaited<ReturnType<typeof round>>[]>(sides.map((side) => [side.name, []]));
  for (let r = 0; r < rounds; r++) for (const side of sides) results.get(side.name)!.push(await round(side, s.body, s.authed, s.parallel));
  for (const side of sides) {
    const rs = results.get(side.name)!;
    const h = rs.map((x) => x.healthzMs);
    console.log(
      `${s.name.padEnd(13)} ${side.name.padEnd(7)} ${rs[0].statuses.padEnd(8)} ${median(h).toFixed(1).padStart(8)} ms (${Math.min(...h).toFixed(1)}-${Math.max(...h).toFixed(1)})`.padEnd(
        72,
      ) +
        `${median(rs.map((x) => x.bigMs))
          .toFixed(0)
          .padStart(7)} ms   ${median(rs.map((x) => x.peakMb))
          .toFixed(0)
          .padStart(8)} MB`,
    );
  }
}
for (const side of sides) side.child.send("stop");
