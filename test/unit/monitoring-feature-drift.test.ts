import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { prng } from "../../src/datasets/split.js";
import { binOf, type MonitoringBaseline, type NumericBaseline } from "../../src/monitoring/baseline.js";
import { driftOf, type WindowCounts } from "../../src/monitoring/drift.js";
import { mergeSeries, MonitoringRecorder, type Series } from "../../src/monitoring/recorder.js";
import type { MonitoringRepository, SeriesRow } from "../../src/monitoring/repository.js";
import { featureProjection } from "../../src/serving/input-check.js";
import type { ServedManifest } from "../../src/serving/manifest.js";

// The feature summary's drift (issue 49 item 4): an image model serves its penultimate-layer features' standardised
// projections beside the check (model.onnx's input_check output after its six values); the recorder bins each
// component against the baseline's deciles, replicas' histograms add bin for bin, and the drift table judges each
// component with the columns' tests. A model built before the projections has no feature rows and still records.

const K = 4;
const normals = (rnd: () => number, n: number, shift = 0) =>
  Array.from({ length: n }, () => shift + Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd()));

/** A component's baseline as the pipeline writes it (common/monitoring_baseline.py numeric): counts between deciles. */
function component(name: string, values: number[]): NumericBaseline {
  const sorted = [...values].sort((a, b) => a - b);
  const q = (p: number) => {
    const at = p * (sorted.length - 1);
    const lo = Math.floor(at);
    return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (at - lo);
  };
  const edges = [...new Set(Array.from({ length: 9 }, (_, i) => Math.round(q((i + 1) / 10) * 1e6) / 1e6))];
  const counts = new Array<number>(edges.length + 1).fill(0);
  for (const v of values) counts[binOf(edges, v)]++;
  return {
    name,
    type: "numeric",
    edges,
    counts,
    missing: 0,
    quantiles: { p05: q(0.05), p25: q(0.25), p50: q(0.5), p75: q(0.75), p95: q(0.95) },
  };
}

function modelWith(features: boolean) {
  const rnd = prng(7);
  const baseline: MonitoringBaseline = {
    schema_version: 1,
    source: "validation and test patients",
    n: 400,
    ...(features
      ? {
          features: { images: 400, descriptors: Array.from({ length: K }, (_, i) => component(`img:feature:${i + 1}`, normals(rnd, 400))) },
        }
      : {}),
  };
  const manifest = {
    problem: "binary",
    classes: [
      { index: 0, code: "0", name: "no" },
      { index: 1, code: "1", name: "yes" },
    ],
    input: {},
    monitoring_baseline: baseline,
  };
  return { baseline, model: { id: "m1", experimentUuid: "e1", manifest } };
}

/** A recorder whose database keeps what each flush gives it; `fail` makes the next write throw once. */
function recorder() {
  const written: SeriesRow[] = [];
  let fail = false;
  const repo = {
    write: async (rows: SeriesRow[]) => {
      if (fail) {
        fail = false;
        throw new Error("database away");
      }
      written.push(...rows);
    },
  } as unknown as MonitoringRepository;
  const rec = new MonitoringRecorder({ repo, logger: { warn() {} } as never, flushMs: 60_000, now: () => 7_200_000 });
  return { rec, written, failNext: () => (fail = true) };
}

const image = (features: number[]) => ({ width: 28, height: 28, channels: 1, mean: 100, std: 30, features: Float32Array.from(features) });

function send(rec: MonitoringRecorder, model: ReturnType<typeof modelWith>["model"], images: number[][], from = 0) {
  images.forEach((f, i) =>
    rec.record(model, {
      requestId: `r${from + i}`,
      scores: [0.5, 0.5],
      decision: 0,
      latencyMs: 2,
      inputCheck: "familiar",
      image: image(f),
    }),
  );
}

/** What the database holds after upsert-adding every row of an hour and series (the SQL's bin-for-bin sum). */
function summed(rows: SeriesRow[]): WindowCounts {
  const into = new Map<string, Series>();
  for (const r of rows) mergeSeries(into, new Map([[r.series, { n: r.n, sum: r.sum, counts: [...r.counts] }]]));
  return new Map([...into].map(([k, s]) => [k, s.counts]));
}

/** n images of K components each, component 1 shifted by `shift` standard deviations. */
function images(seed: number, n: number, shift = 0): number[][] {
  const rnd = prng(seed);
  return Array.from({ length: n }, () => normals(rnd, K).map((v, i) => (i === 0 ? v + shift : v)));
}

describe("feature summary drift", () => {
  it("bins each component against its deciles, O(1) series per component", async () => {
    const { model, baseline } = modelWith(true);
    const { rec, written } = recorder();
    const sent = images(1, 50);
    send(rec, model, sent);
    await rec.flush();
    const window = summed(written);
    for (let c = 0; c < K; c++) {
      const d = baseline.features!.descriptors[c];
      const want = new Array<number>(d.edges.length + 1).fill(0);
      for (const f of sent) want[binOf(d.edges, Math.fround(f[c]))]++;
      expect(window.get(`img:feature:${c + 1}`)).toEqual(want);
    }
    expect([...window.keys()].filter((k) => k.startsWith("img:feature:"))).toHaveLength(K);
  });

  it("two replicas' histograms add up to what one replica would have counted, and a failed flush is kept once", async () => {
    const { model, baseline } = modelWith(true);
    const all = images(2, 300, 0.8);
    const one = recorder();
    send(one.rec, model, all);
    await one.rec.flush();
    const a = recorder();
    const b = recorder();
    send(a.rec, model, all.slice(0, 120));
    send(b.rec, model, all.slice(120), 120);
    // Replica b cannot write its first flush: its counts wait in memory, merged with what comes next.
    b.failNext();
    await b.rec.flush();
    expect(b.written).toHaveLength(0);
    await b.rec.flush();
    await a.rec.flush();
    const merged = summed([...a.written, ...b.written]);
    const single = summed(one.written);
    for (let c = 1; c <= K; c++) expect(merged.get(`img:feature:${c}`)).toEqual(single.get(`img:feature:${c}`));
    expect(driftOf(baseline, merged)).toEqual(driftOf(baseline, single));
  });

  it("an in-distribution window shows no feature drift; a shifted one drifts on the shifted component", async () => {
    const { model, baseline } = modelWith(true);
    const same = recorder();
    send(same.rec, model, images(3, 200));
    await same.rec.flush();
    const calm = driftOf(baseline, summed(same.written));
    const rows = calm.features.filter((f) => f.kind === "features");
    expect(rows).toHaveLength(K);
    expect(rows.every((f) => !f.drifted && f.n === 200 && f.baseline_n === 400 && f.test === "ks")).toBe(true);
    const moved = recorder();
    send(moved.rec, model, images(4, 200, 1.5));
    await moved.rec.flush();
    const drift = driftOf(baseline, summed(moved.written));
    const by = Object.fromEntries(drift.features.map((f) => [f.feature, f]));
    expect(by["img:feature:1"]).toMatchObject({ kind: "features", type: "numeric", drifted: true, severity: "high" });
    expect(drift.features[0].feature).toBe("img:feature:1"); // the worst first
    expect(drift.status).toBe("drift");
  });

  it("a small window's component is judged at 0.05 / k (one question asked k times)", () => {
    const { baseline } = modelWith(true);
    // A window whose component 1 is a little off: p between 0.05 / K and 0.05.
    const d = baseline.features!.descriptors[0];
    for (let extra = 1; extra < 60; extra++) {
      const win = d.counts.map((c, i) => (i === 0 ? c + extra : c)); // more of the lowest bin than the baseline had
      const r = driftOf(baseline, new Map([["img:feature:1", win]])).features.find((f) => f.feature === "img:feature:1")!;
      if (r.p_value! < 0.05 && r.p_value! >= 0.05 / K) {
        expect(r.drifted).toBe(false);
        return;
      }
    }
    throw new Error("no window with p between 0.05 / k and 0.05 was found");
  });

  it("a model built before the feature summary keeps working: no feature series, no feature rows", async () => {
    const { model, baseline } = modelWith(false);
    const { rec, written } = recorder();
    send(rec, model, images(5, 40));
    await rec.flush();
    expect(written.some((r) => r.series.startsWith("img:feature:"))).toBe(false);
    expect(written.find((r) => r.series === "predictions")?.n).toBe(40);
    expect(driftOf(baseline, summed(written)).features.some((f) => f.kind === "features")).toBe(false);
  });

  it("serving reads the projections after the check's six values, only when the manifest says they are there", () => {
    const out = { input_check: new ort.Tensor("float32", Float32Array.from([1, 2, 3, 4, 5, 6, 0.5, -1.25, 2]), [1, 9]) };
    const spec = { output: "input_check", threshold: 1, pixel_threshold: 1 };
    const m = (k?: number) => ({ input_check: { mode: "flag", image: { ...spec, projected_components: k } } }) as unknown as ServedManifest;
    expect(Array.from(featureProjection(m(3), out)!)).toEqual([0.5, -1.25, 2]);
    expect(featureProjection(m(undefined), out)).toBeUndefined(); // built before the projections
    expect(featureProjection(m(8), out)).toBeUndefined(); // a graph shorter than the manifest says: nothing binned
    expect(featureProjection({} as ServedManifest, out)).toBeUndefined();
  });
});
