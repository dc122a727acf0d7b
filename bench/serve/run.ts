/**
 * Serving benchmark: HTTP /predict against an in-process loop doing the same work on the same model.
 *
 *   nice npx tsx bench/serve/run.ts [--seconds 5] [--rounds 3] [--soak 60] [--soak-kind vision_resnet] [--kinds vision,detection,tabular]
 *   (env ORT_INTRA_OP_THREADS, SERVING_MAX_BATCH and GRADCAM_MAX_SIDE pass through to the server's config)
 *
 * For each kind and concurrency 1, 8, 32: median and p99 latency and requests/s of
 *  - in-process: base64 decode of the data: URI + decode + preprocess + session.run + post-processing/maps,
 *    calling the same functions the route calls (fetchImageBytes + predictImage / predictTabular);
 *  - HTTP: POST /v1/experiments/{id}/predict with the data: URI, keep-alive, on the same server process;
 * and the ratios HTTP / in-process. The two alternate (--rounds times, --seconds each) so that load from other
 * processes on a shared machine falls on both alike; each ratio is the median of the rounds' ratios, and the
 * printed latencies and rates pool all rounds. Then the cost of Grad-CAM maps, the effect of batching, and a soak run at
 * concurrency 32 counting errors and sampling RSS. HTTP requests come from a separate client process
 * (http-load.ts): its CPU is not counted as the server's, but on a small machine it still competes for the cores.
 */
import os from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { Pool } from "undici";
import { fetchImageBytes } from "../../src/net/image-fetch.js";
import { predictImage, predictTabular } from "../../src/serving/predict.js";
import { openPredictor } from "../../src/serving/placement.js";
import type { BatchingPredictor } from "../../src/serving/placement-batching.js";
import { startBenchServer, TABULAR_ROW } from "./bench-server.js";
import { personalScope } from "../../src/workspaces/scope.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const SECONDS = Number(opt("seconds", "5"));
const SOAK = Number(opt("soak", "60"));
/** The model the soak run loads (one of --kinds): an image model's answers are large, a tabular model's many. */
const SOAK_KIND = opt("soak-kind", "vision_resnet");
const KINDS = opt("kinds", "vision,vision_resnet,detection,tabular").split(",");
const CONCURRENCY = opt("concurrency", "1,8,32").split(",").map(Number);
/** In-process and HTTP alternate this many times per point; ratios are the median of the rounds' ratios. */
const ROUNDS = Number(opt("rounds", "3"));

/** cpuMs: the server process's CPU per request; clientCpuMs: the load client's (HTTP only; NaN in-process). */
interface Stats {
  n: number;
  errors: number;
  median: number;
  p99: number;
  rps: number;
  cpuMs: number;
  clientCpuMs: number;
  lat: number[];
}

function summarise(lat: number[], errors: number, seconds: number, cpuMs = NaN, clientCpuMs = NaN): Stats {
  const s = [...lat].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN);
  const perRequest = (ms: number) => ms / Math.max(1, s.length);
  return {
    n: s.length,
    errors,
    median: q(0.5),
    p99: q(0.99),
    rps: s.length / seconds,
    cpuMs: perRequest(cpuMs),
    clientCpuMs: perRequest(clientCpuMs),
    lat,
  };
}

/** Runs `fn` from `concurrency` loops for `seconds` (after a short warm-up), timing each call. */
async function load(fn: () => Promise<unknown>, concurrency: number, seconds: number): Promise<Stats> {
  const warmEnd = Date.now() + 500;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < warmEnd) await fn().catch(() => undefined);
    }),
  );
  const lat: number[] = [];
  let errors = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        try {
          await fn();
          lat.push(performance.now() - s);
        } catch {
          errors++;
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  // Process CPU (all threads: event loop, ORT, sharp, workers) per request: robust to other load on the machine.
  return summarise(lat, errors, (performance.now() - t0) / 1000, (cpu.user + cpu.system) / 1000);
}

/** The same measurement, with the requests sent from the client process (http-load.ts); CPU is the server's only. */
async function loadHttp(
  client: ChildProcess,
  job: { url: string; path: string; key: string; body: string },
  concurrency: number,
  seconds: number,
): Promise<Stats> {
  let cpu0 = process.cpuUsage();
  const result = await new Promise<{ latencies: number[]; errors: number; firstError?: string; seconds: number; cpuMs?: number }>(
    (resolve) => {
      const onMessage = (m: { type: string; latencies: number[]; errors: number; seconds: number; cpuMs?: number }) => {
        if (m.type === "started") cpu0 = process.cpuUsage(); // after the client's warm-up
        if (m.type === "done") {
          client.off("message", onMessage);
          resolve(m);
        }
      };
      client.on("message", onMessage);
      client.send({ ...job, concurrency, seconds });
    },
  );
  const cpu = process.cpuUsage(cpu0);
  if (result.firstError) console.log(`  (first error: ${result.firstError})`);
  return summarise(result.latencies, result.errors, result.seconds, (cpu.user + cpu.system) / 1000, result.cpuMs ?? NaN);
}

/** Several runs' figures as one: latencies pooled, rates and CPU averaged. */
function pool_(runs: Stats[]): Stats {
  const lat = runs.flatMap((r) => r.lat);
  const seconds = runs.reduce((t, r) => t + r.n / Math.max(r.rps, 1e-9), 0);
  const cpu = runs.reduce((t, r) => t + r.cpuMs * r.n, 0);
  const clientCpu = runs.reduce((t, r) => t + r.clientCpuMs * r.n, 0);
  return summarise(
    lat,
    runs.reduce((t, r) => t + r.errors, 0),
    seconds,
    cpu,
    clientCpu,
  );
}

const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "-");
const line = (label: string, s: Stats) =>
  `${label.padEnd(34)} median ${f(s.median, 2).padStart(8)} ms  p99 ${f(s.p99, 2).padStart(8)} ms  ${f(s.rps).padStart(7)} req/s  cpu ${f(s.cpuMs, 2).padStart(6)} ms/req  errors ${s.errors}` +
  (Number.isFinite(s.clientCpuMs) ? `  client cpu ${f(s.clientCpuMs, 2)} ms/req (${f((s.clientCpuMs * s.rps) / 1000, 2)} cores)` : "");

async function main() {
  const ids: Record<string, number> = { vision: 1, detection: 2, tabular: 3, vision_resnet: 4 };
  const bench = await startBenchServer(ids);
  const { config, running, services, user, key, fxDir, photo, client } = bench;
  const row = TABULAR_ROW;
  const pool = new Pool(running.url, { connections: 64, pipelining: 1 });
  const ctx = { storagePrefix: user.id, bucket: services.bucket, guard: services.serving.guard, maxBytes: config.FETCH_MAX_BYTES };
  const popts = { maxPixels: config.FETCH_MAX_PIXELS, gradcamMaxSide: config.GRADCAM_MAX_SIDE };

  console.log(
    `# serve benchmark  ${new Date().toISOString()}  node ${process.version}  cpus ${os.cpus().length}  load ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
  console.log(
    `# image: 512x384 JPEG (${Math.round(photo.length / 1024)} KB as data: URI); ${SECONDS}s per point; ORT_INTRA_OP_THREADS=${config.ORT_INTRA_OP_THREADS} SERVING_MAX_BATCH=${config.SERVING_MAX_BATCH ?? "auto"}`,
  );

  const http = async (id: number, message: unknown) => {
    const res = await pool.request({
      method: "POST",
      path: `/v1/experiments/${id}/predict`,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    return text;
  };

  const summary: string[] = [];
  for (const kind of KINDS) {
    const id = ids[kind];
    const model = await services.serving.model(await personalScope(services.db, user.id), id);
    const message = kind === "tabular" ? row : photo;
    // An image answer's memory goes back to its thread once used, as the HTTP route does after writing it.
    const inproc =
      kind === "tabular"
        ? () => predictTabular(model, row)
        : async () => (await predictImage(model, (await fetchImageBytes(photo, ctx)).bytes, popts)).release?.();
    await http(id, message); // load and check once
    console.log(
      `\n## ${kind} (${model.manifest.input.image ? `${model.manifest.input.image.width}x${model.manifest.input.image.height} input` : `${model.manifest.input.columns!.length} columns`})`,
    );
    for (const c of CONCURRENCY) {
      const rounds: Array<{ a: Stats; b: Stats }> = [];
      for (let r = 0; r < ROUNDS; r++) {
        const a = await load(inproc, c, SECONDS);
        const b = await loadHttp(
          client,
          { url: running.url, path: `/v1/experiments/${id}/predict`, key, body: JSON.stringify({ message }) },
          c,
          SECONDS,
        );
        rounds.push({ a, b });
      }
      const a = pool_(rounds.map((x) => x.a));
      const b = pool_(rounds.map((x) => x.b));
      // The rounds' median; with an even number of rounds the mean of the middle two (it took the lower one until
      // 2026-11-25, which with --rounds 2 printed the worse round's throughput ratio and the better round's latency one).
      const med = (xs: number[]) => {
        const s = [...xs].sort((p, q) => p - q),
          m = s.length >> 1;
        return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
      };
      const ratio = (f: (s: Stats) => number) => med(rounds.map((x) => f(x.b) / f(x.a)));
      console.log(line(`in-process  c=${c}`, a));
      console.log(line(`HTTP        c=${c}`, b));
      const r = `${kind} c=${c}: median HTTP/in-process ${f(
        ratio((s) => s.median),
        2,
      )}x, throughput HTTP/in-process ${f(100 * ratio((s) => s.rps), 0)}%, CPU per request HTTP/in-process ${f(
        ratio((s) => s.cpuMs),
        2,
      )}x (${f(b.cpuMs, 2)} / ${f(a.cpuMs, 2)} ms), the client ${f(b.clientCpuMs, 2)} ms per request = ${f((b.clientCpuMs * b.rps) / 1000, 2)} of ${os.cpus().length} cores (median of ${ROUNDS} alternating rounds: ${rounds.map((x) => f(x.b.median / x.a.median, 2)).join(" ")})`;
      console.log(`  -> ${r}`);
      summary.push(r);
    }
    if (kind.startsWith("vision")) {
      const pairs: Array<{ noMaps: Stats; maps: Stats }> = [];
      for (let r = 0; r < ROUNDS; r++) {
        pairs.push({
          noMaps: await load(
            async () => (await predictImage(model, (await fetchImageBytes(photo, ctx)).bytes, { ...popts, noMaps: true })).release?.(),
            1,
            SECONDS,
          ),
          maps: await load(inproc, 1, SECONDS),
        });
      }
      const noMaps = pool_(pairs.map((p) => p.noMaps));
      const maps = pool_(pairs.map((p) => p.maps));
      console.log(line("in-process c=1 without maps", noMaps));
      console.log(line("in-process c=1 with maps", maps));
      const r = `${kind}: Grad-CAM maps add ${f((100 * (maps.median - noMaps.median)) / noMaps.median, 0)}% to the median (${f(maps.median - noMaps.median, 2)} ms), ${f((100 * (maps.cpuMs - noMaps.cpuMs)) / noMaps.cpuMs, 0)}% to CPU per request (in-process, maps at ${config.GRADCAM_MAX_SIDE} px, their JSON included: the worker thread encodes the answer)`;
      console.log(`  -> ${r}`);
      summary.push(r);
      // Batching: the same model placed to never batch (threads) and to batch, at concurrency 8 (in-process).
      const load1 = (maxBatch: number) =>
        openPredictor(path.join(fxDir, kind, "model.onnx"), model.manifest, { intraOpThreads: config.ORT_INTRA_OP_THREADS, maxBatch });
      const unbatched = await load1(1);
      const batched = await load1(16);
      const off = await load(
        async () => (await predictImage({ ...model, predictor: unbatched }, (await fetchImageBytes(photo, ctx)).bytes, popts)).release?.(),
        8,
        SECONDS,
      );
      const on = await load(
        async () => (await predictImage({ ...model, predictor: batched }, (await fetchImageBytes(photo, ctx)).bytes, popts)).release?.(),
        8,
        SECONDS,
      );
      const sizes = (batched as BatchingPredictor).batchSizes;
      await batched.close();
      console.log(line("in-process c=8 batching off", off));
      console.log(line("in-process c=8 batching on", on));
      const r2 = `${kind} c=8: batching ${f(on.rps)} vs ${f(off.rps)} req/s, cpu ${f(on.cpuMs, 2)} vs ${f(off.cpuMs, 2)} ms/req (mean batch ${f(sizes.reduce((s, x) => s + x, 0) / Math.max(1, sizes.length), 2)})`;
      console.log(`  -> ${r2}`);
      summary.push(r2);
      await unbatched.close();
    }
  }

  if (SOAK > 0) {
    const id = ids[SOAK_KIND];
    const rss: number[] = [];
    const sample = () => rss.push(process.memoryUsage().rss / 2 ** 20);
    sample();
    const timer = setInterval(sample, 5_000);
    const s = await loadHttp(
      client,
      {
        url: running.url,
        path: `/v1/experiments/${id}/predict`,
        key,
        body: JSON.stringify({ message: SOAK_KIND === "tabular" ? TABULAR_ROW : photo }),
      },
      32,
      SOAK,
    );
    clearInterval(timer);
    sample();
    console.log(`\n## soak: ${SOAK_KIND} over HTTP, concurrency 32, ${SOAK}s`);
    console.log(line("HTTP c=32 soak", s));
    const r = `soak ${SOAK}s c=32: ${s.n} requests, ${s.errors} errors, RSS start ${f(rss[0], 0)} MB, end ${f(rss[rss.length - 1], 0)} MB, max ${f(Math.max(...rss), 0)} MB (samples ${rss.map((x) => x.toFixed(0)).join(" ")})`;
    console.log(`  -> ${r}`);
    summary.push(r);
  }
  console.log(`\n# summary\n${summary.map((x) => `- ${x}`).join("\n")}`);
  await pool.close();
  await bench.close();
}

// Exit explicitly: after a run with an image model something (only tsx's loader MessagePort shows as a handle; the
// cause is not found) keeps the process alive after the summary, holding the benchmark lock until killed.
main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
