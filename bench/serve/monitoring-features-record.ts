/**
 * What the feature summary adds to a prediction's monitoring (issue 49 items 4 and 8): MonitoringRecorder.record()
 * of an image prediction with its descriptors, with and without the 8 feature projections binned, alternated round
 * by round in one process (the ratio is what means something on a shared machine; the absolute figures do not).
 * The database is a stand-in that drops what it is given: this is the request path's part only.
 *
 *   npx tsx bench/serve/monitoring-features-record.ts [--rounds 10] [--n 200000]
 */
import { performance } from "node:perf_hooks";
import { MonitoringRecorder } from "../../src/monitoring/recorder.js";
import type { MonitoringRepository } from "../../src/monitoring/repository.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const ROUNDS = Number(opt("rounds", "10"));
const N = Number(opt("n", "200000"));
const K = 8;

const numeric = (name: string) => ({
  name,
  type: "numeric" as const,
  edges: [-1.28, -0.84, -0.52, -0.25, 0, 0.25, 0.52, 0.84, 1.28],
  counts: [10, 10, 10, 10, 10, 10, 10, 10, 10, 10],
  missing: 0,
  quantiles: { p05: -1.6, p25: -0.7, p50: 0, p75: 0.7, p95: 1.6 },
});
const manifest = {
  problem: "binary",
  classes: [
    { index: 0, code: "0", name: "no" },
    { index: 1, code: "1", name: "yes" },
  ],
  input: {},
  monitoring_baseline: {
    schema_version: 1,
    source: "validation and test patients",
    n: 100,
    image: { images: 100, descriptors: ["img:width", "img:height", "img:aspect", "img:mean", "img:std"].map(numeric) },
    features: { images: 100, descriptors: Array.from({ length: K }, (_, i) => numeric(`img:feature:${i + 1}`)) },
  },
};
const repo = { write: async () => undefined } as unknown as MonitoringRepository;
const model = { id: "m", experimentUuid: "e", manifest };
const projections = Array.from({ length: 64 }, (_, j) => Float32Array.from({ length: K }, (_, i) => Math.sin(j * 7 + i)));

async function round(withFeatures: boolean): Promise<number> {
  const rec = new MonitoringRecorder({ repo, logger: { warn() {} } as never, flushMs: 60_000 });
  const scores = [0.3, 0.7];
  const t = performance.now();
  for (let i = 0; i < N; i++) {
    const image = {
      width: 28,
      height: 28,
      channels: 1,
      mean: 100 + (i % 50),
      std: 30,
      ...(withFeatures ? { features: projections[i & 63] } : {}),
    };
    rec.record(model, { requestId: `r${i}`, scores, decision: 1, latencyMs: 3, inputCheck: "familiar", image });
  }
  const ns = ((performance.now() - t) * 1e6) / N;
  await rec.flush();
  return ns;
}

const without: number[] = [];
const withF: number[] = [];
await round(true); // warm-up
await round(false);
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2) {
    withF.push(await round(true));
    without.push(await round(false));
  } else {
    without.push(await round(false));
    withF.push(await round(true));
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const ratios = without.map((w, i) => withF[i] / w);
console.log(`record() without features: median ${median(without).toFixed(0)} ns (rounds ${without.map((x) => x.toFixed(0)).join(" ")})`);
console.log(`record() with ${K} features: median ${median(withF).toFixed(0)} ns (rounds ${withF.map((x) => x.toFixed(0)).join(" ")})`);
console.log(`ratio per round: ${ratios.map((x) => x.toFixed(2)).join(" ")}; median ${median(ratios).toFixed(2)}x`);
console.log(JSON.stringify({ rounds: ROUNDS, n: N, k: K, without_ns: median(without), with_ns: median(withF), ratio: median(ratios) }));
