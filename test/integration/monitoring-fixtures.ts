import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { servingFixtures } from "../fixtures/serving/fixtures.js";
import { bearer } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";

/**
 * The serving fixture's binary table model (age, sex, bmi, site) with a monitoring baseline written by hand, as a
 * pipeline would freeze it: age's and bmi's deciles from a known sample, sex and site counts, the score bins.
 */
export function fixtureWithBaseline(): string {
  const fx = servingFixtures();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-monitoring-model-"));
  fs.copyFileSync(path.join(fx.dir, "tabular_binary", "model.onnx"), path.join(dir, "model.onnx"));
  const manifest = JSON.parse(fs.readFileSync(path.join(fx.dir, "tabular_binary", "manifest.json"), "utf8"));
  const ageEdges = [30, 38, 45, 50, 55, 60, 65, 70, 78];
  const bmiEdges = [20, 22, 24, 25, 26, 27, 29, 31, 34];
  manifest.monitoring_baseline = {
    schema_version: 1,
    source: "validation and test patients",
    n: 1000,
    positive_index: 1,
    positive_rate: 0.3,
    columns: [
      {
        name: "age",
        type: "numeric",
        edges: ageEdges,
        counts: Array(10).fill(100),
        missing: 0,
        quantiles: { p05: 25, p25: 45, p50: 55, p75: 67, p95: 85 },
      },
      { name: "sex", type: "categorical", counts: { "0": 500, "1": 500 } },
      {
        name: "bmi",
        type: "numeric",
        edges: bmiEdges,
        counts: Array(10).fill(100),
        missing: 0,
        quantiles: { p05: 19, p25: 24, p50: 26.5, p75: 30, p95: 36 },
      },
      { name: "site", type: "categorical", counts: { "0": 334, "1": 333, "2": 333 } },
    ],
    score: { edges: Array.from({ length: 19 }, (_, i) => (i + 1) * 0.05), counts: Array(20).fill(50) },
  };
  fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest));
  return dir;
}

/** A row drawn like the baseline (age 18-95 spread over its deciles, bmi likewise); shift adds to age. */
export function fixtureRow(i: number, shift = 0): number[] {
  const age = 20 + ((i * 37) % 75) + shift;
  const bmi = 18 + ((i * 53) % 20);
  return [age, i % 2, bmi, i % 3];
}

export async function predict(s: TestServer, key: string, experimentId: number, row: unknown[], requestId?: string) {
  const res = await fetch(`${s.url}/v1/experiments/${experimentId}/predict`, {
    method: "POST",
    headers: bearer(key, { "content-type": "application/json", ...(requestId ? { "x-request-id": requestId } : {}) }),
    body: JSON.stringify({ message: row }),
  });
  return { status: res.status, requestId: res.headers.get("x-request-id")!, body: (await res.json()) as any };
}
