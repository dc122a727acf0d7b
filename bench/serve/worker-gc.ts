/**
 * Tail latency at concurrency 1 and the garbage collections behind it, per thread.
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/worker-gc.ts [--kind vision] [--seconds 10] [--v8 "--some-flag ..."]
 *
 * --v8 passes V8 flags to the measured process (to try a change without editing the code).
 *
 * Runs itself again under `node --trace-gc` (V8 prints every collection of every isolate, worker threads
 * included) and prints, for one image model: the latency of in-process predictions (predictImage, one at a time)
 * and of HTTP /predict from the load client process (c=1), then the mark-compacts and scavenges per isolate. The
 * c=1 p99 of issue 17 came from an inference thread running a full mark-compact every ~15 requests; see
 * sizeThreadHeaps in src/serving/worker-pool.ts.
 */
import { spawnSync } from "node:child_process";
import { PerformanceObserver } from "node:perf_hooks";
import { fetchImageBytes } from "../../src/net/image-fetch.js";
import { predictImage } from "../../src/serving/predict.js";
import { startBenchServer } from "./bench-server.js";
import { tallyCollections } from "./gc-trace.js";
import { personalScope } from "../../src/workspaces/scope.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const KIND = opt("kind", "vision");
const SECONDS = Number(opt("seconds", "10"));

function describe(label: string, lat: number[]): string {
  const s = [...lat].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `${label.padEnd(12)} n ${String(s.length).padStart(5)}  median ${q(0.5).toFixed(2)} ms  p90 ${q(0.9).toFixed(2)} ms  p99 ${q(0.99).toFixed(2)} ms  max ${s[s.length - 1].toFixed(2)} ms  p99/median ${(q(0.99) / q(0.5)).toFixed(2)}`;
}

async function child() {
  const bench = await startBenchServer({ [KIND]: 1 });
  const { services, user, config } = bench;
  const model = await services.serving.model(await personalScope(services.db, user.id), 1);
  const ctx = { storagePrefix: user.id, bucket: services.bucket, guard: services.serving.guard, maxBytes: config.FETCH_MAX_BYTES };
  const popts = { maxPixels: config.FETCH_MAX_PIXELS, gradcamMaxSide: config.GRADCAM_MAX_SIDE };
  const inproc: number[] = [];
  const end = performance.now() + SECONDS * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const t = performance.now();
    (await predictImage(model, (await fetchImageBytes(bench.photo, ctx)).bytes, popts)).release?.();
    if (i >= 20) inproc.push(performance.now() - t);
  }
  console.log(`RESULT ${describe("in-process", inproc)}`);
  // The event loop's own collections (epoch ms), to see whether the slowest HTTP requests met one.
  const gcs: Array<{ start: number; end: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push({ start: performance.timeOrigin + e.startTime, end: performance.timeOrigin + e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ["gc"] });
  const http = await new Promise<{ latencies: number[]; starts: number[] }>((resolve) => {
    bench.client.on("message", (m: { type: string; latencies: number[]; starts: number[] }) => m.type === "done" && resolve(m));
    bench.client.send({
      url: bench.running.url,
      path: "/v1/experiments/1/predict",
      key: bench.key,
      body: JSON.stringify({ message: bench.photo }),
      concurrency: 1,
      seconds: SECONDS,
    });
  });
  observer.disconnect();
  console.log(`RESULT ${describe("HTTP c=1", http.latencies)}`);
  const metGc = (i: number) => gcs.some((g) => g.start < http.starts[i] + http.latencies[i] && g.end > http.starts[i]);
  const order = http.latencies.map((_, i) => i).sort((a, b) => http.latencies[b] - http.latencies[a]);
  const slowest = order.slice(0, Math.max(1, Math.ceil(order.length / 100)));
  const share = (ids: number[]) => `${ids.filter(metGc).length}/${ids.length}`;
  console.log(`RESULT event-loop GC during the request: slowest 1% ${share(slowest)}, all ${share(order)} (${gcs.length} collections)`);
  await bench.close();
  process.exit(0);
}

function parent() {
  const v8 = opt("v8", "").split(" ").filter(Boolean);
  const r = spawnSync(
    process.execPath,
    [...v8, "--trace-gc", "--import", "tsx", new URL(import.meta.url).pathname, "--child", "--kind", KIND, "--seconds", String(SECONDS)],
    { encoding: "utf8", maxBuffer: 256 * 2 ** 20 },
  );
  const lines = r.stdout.split("\n");
  const gcs = tallyCollections(lines);
  console.log(
    `# ${KIND}, ${SECONDS} s in-process then ${SECONDS} s HTTP, one request at a time${v8.length ? `, V8 flags ${v8.join(" ")}` : ""}  ${new Date().toISOString()}`,
  );
  for (const l of lines) if (l.startsWith("RESULT ")) console.log(l.slice(7));
  console.log("# collections per isolate over the whole run (start-up included; isolates with under 10 left out)");
  for (const [iso, g] of gcs)
    if (g.mc + g.scavenge >= 10)
      console.log(
        `${iso.padEnd(16)} mark-compact ${String(g.mc).padStart(4)} (pause max ${Math.max(0, ...g.mcMs).toFixed(1)} ms)  scavenge ${String(g.scavenge).padStart(4)}`,
      );
  if (r.status !== 0) console.log(r.stderr.slice(-2000));
}

if (args.includes("--child")) await child();
else parent();
