import { describe, expect, it } from "vitest";
import type { MonitoringBaseline } from "../../src/monitoring/baseline.js";
import { driftOf, type WindowCounts } from "../../src/monitoring/drift.js";
import { MonitoringRecorder } from "../../src/monitoring/recorder.js";
import type { MonitoringRepository, SeriesRow } from "../../src/monitoring/repository.js";
import { describeImage, SAMPLE_PIXELS } from "../../src/serving/image-descriptors.js";
import { buildReport } from "../../src/monitoring/report.js";

// Image descriptors for drift (issue 49 items 1 and 4): computed from the decoded pixels as the pipeline computes
// them for the baseline (pipelines/tests/test_image_descriptors.py checks the same pattern by the same formula), then
// binned by the recorder against the baseline's descriptors and judged in the drift table beside the columns.

/** Channel c of pixel i is (i * 7 + c * 50) % 256: the pattern the Python test uses. */
function pattern(w: number, h: number, channels: 1 | 3): Uint8Array {
  const px = new Uint8Array(w * h * channels);
  for (let i = 0; i < w * h; i++) for (let c = 0; c < channels; c++) px[i * channels + c] = (i * 7 + c * 50) % 256;
  return px;
}
function meanStd(values: number[]) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { mean, std: Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length) };
}

describe("image descriptors", () => {
  it("a small RGB image: every pixel, the mean of its channels", () => {
    const pixels = pattern(40, 30, 3);
    const d = describeImage({ pixels, width: 40, height: 30, channels: 3 });
    const v = Array.from({ length: 1200 }, (_, i) => (pixels[i * 3] + pixels[i * 3 + 1] + pixels[i * 3 + 2]) / 3);
    const want = meanStd(v);
    expect(d).toMatchObject({ width: 40, height: 30, channels: 3 });
    expect(d.mean).toBeCloseTo(want.mean, 9);
    expect(d.std).toBeCloseTo(want.std, 9);
    expect(d.modality).toBeUndefined();
  });

  it("a large grey image is sampled at an even stride; a DICOM's categories come along", () => {
    const pixels = pattern(400, 300, 1);
    const stride = Math.floor(120_000 / SAMPLE_PIXELS);
    const v = Array.from({ length: Math.ceil(120_000 / stride) }, (_, k) => pixels[k * stride]);
    const d = describeImage({
      pixels,
      width: 400,
      height: 300,
      channels: 1,
      dicom: { modality: "US", manufacturer: "Acme", bodyPart: null },
    });
    expect(d.mean).toBeCloseTo(meanStd(v).mean, 9);
    expect(d.std).toBeCloseTo(meanStd(v).std, 9);
    expect(d).toMatchObject({ modality: "US", manufacturer: "Acme", bodyPart: null });
  });

  it("the recorder bins them against the baseline and the drift table judges them: a new scanner's size and modality drift, intensity does not", async () => {
    const baseline: MonitoringBaseline = {
      schema_version: 1,
      source: "validation and test patients",
      n: 100,
      image: {
        images: 100,
        descriptors: [
          {
            name: "img:width",
            type: "numeric",
            edges: [100, 200],
            counts: [0, 100, 0],
            missing: 0,
            quantiles: { p05: 150, p25: 150, p50: 150, p75: 150, p95: 150 },
          },
          {
            name: "img:mean",
            type: "numeric",
            edges: [50, 100, 150],
            counts: [25, 25, 25, 25],
            missing: 0,
            quantiles: { p05: 10, p25: 60, p50: 100, p75: 160, p95: 240 },
          },
          { name: "img:channels", type: "categorical", counts: { "1": 100 } },
          { name: "img:modality", type: "categorical", counts: { US: 100 } },
        ],
      },
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
    const written: SeriesRow[] = [];
    // The database is the recorder's only other part: a stand-in that keeps what it is given (the repository's SQL is
    // tested against Postgres in test/integration/monitoring-records.test.ts).
    const repo = { write: async (rows: SeriesRow[]) => void written.push(...rows) } as unknown as MonitoringRepository;
    const rec = new MonitoringRecorder({ repo, logger: { warn() {} } as never, flushMs: 60_000 });
    const model = { id: "m1", experimentUuid: "e1", manifest };
    for (let i = 0; i < 200; i++) {
      const mean = [20, 70, 120, 200][i % 4];
      const image = {
        width: 640,
        height: 480,
        channels: 1,
        mean,
        std: 30,
        modality: i % 2 ? "CT" : "US",
        manufacturer: "Acme",
        bodyPart: null,
      };
      rec.record(model, { requestId: `r${i}`, scores: [0.6, 0.4], decision: 0, latencyMs: 3, inputCheck: "familiar", image });
    }
    await rec.flush();
    const window: WindowCounts = new Map(written.map((r) => [r.series, r.counts]));
    expect(window.get("img:width")).toEqual([0, 0, 200]);
    expect(window.get("img:modality")).toEqual([100, 100]); // US, then "other" (CT is not in the baseline)
    const drift = driftOf(baseline, window);
    const by = Object.fromEntries(drift.features.map((f) => [f.feature, f]));
    expect(by["img:width"]).toMatchObject({ kind: "descriptor", drifted: true, severity: "high", n: 200 });
    expect(by["img:modality"]).toMatchObject({ kind: "descriptor", type: "categorical", drifted: true });
    expect(by["img:mean"]).toMatchObject({ drifted: false, severity: "none" });
    expect(by["img:channels"].drifted).toBe(false);
    expect(drift.status).toBe("drift");
    // The report counts the input check's findings from the same rows.
    const report = buildReport({
      experimentId: 1,
      model: { manifest, version: 1 } as never,
      from: new Date(0),
      to: new Date(),
      rows: written,
      records: [],
      retentionDays: 190,
    });
    expect(report.unfamiliar_inputs).toEqual({ checked: 200, unfamiliar: 0, unchecked: 0, rate: 0 });
  });
});
