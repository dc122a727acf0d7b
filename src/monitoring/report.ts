import type { ModelRow } from "../serving/model-repository.js";
import { baselineOf, type MonitoringBaseline, PROBABILITY_EDGES } from "./baseline.js";
import { driftOf, type WindowCounts } from "./drift.js";
import { estimated, realized } from "./performance.js";
import { INPUT_CHECK_FINDINGS, LATENCY_EDGES_MS } from "./recorder.js";
import type { LabelledRecord, SeriesRow } from "./repository.js";

/**
 * GET /v1/models/{experiment_id}/monitoring's body, from the stored aggregates and records of a period: volume and
 * latency per hour, the score against the baseline, the positive-decision rate, the drift table (worst first),
 * outcome coverage, realized figures with intervals beside the model card's, and the estimate for the rest.
 */

/** Records read for the performance figures: the newest this many in the period. */
export const MAX_RECORDS = 100_000;

type Manifest = {
  kind?: string;
  problem: string;
  classes: Array<{ index: number; code: string; name: string }>;
  metrics?: { test?: Record<string, { value: number | null; ci_low: number | null; ci_high: number | null } | undefined> };
  clinical?: { positive_class?: { index: number } };
};

/** The class whose decision is positive: the baseline's, else the clinical positive class, else class 1. Binary only. */
export function positiveIndex(manifest: unknown): number | undefined {
  const m = manifest as Manifest;
  if (m.problem !== "binary") return undefined;
  return baselineOf(manifest)?.positive_index ?? m.clinical?.positive_class?.index ?? 1;
}

const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);

function addInto(into: WindowCounts, name: string, counts: number[]) {
  const t = into.get(name);
  if (!t) into.set(name, [...counts]);
  else for (let i = 0; i < counts.length; i++) t[i] = (t[i] ?? 0) + counts[i];
}

/** The upper edge of the latency bin where the cumulative share reaches q: "at most this many ms". */
function latencyQuantile(counts: number[], q: number): number | null {
  const n = sum(counts);
  if (!n) return null;
  let c = 0;
  for (let i = 0; i < counts.length; i++) {
    c += counts[i];
    if (c >= q * n) return i < LATENCY_EDGES_MS.length ? LATENCY_EDGES_MS[i] : null;
  }
  return null;
}

function modelCard(m: Manifest) {
  const t = m.metrics?.test ?? {};
  const pick = (k: string) => t[k] ?? null;
  return {
    source: "test split (model card)",
    sensitivity: pick("sensitivity"),
    specificity: pick("specificity"),
    ppv: pick("ppv"),
    npv: pick("npv"),
    auc: pick("auc"),
    accuracy: pick("accuracy"),
  };
}

function volume(rows: SeriesRow[], positive: number | undefined) {
  const hours = new Map<number, { n: number; latency: number; positives: number; versions: Set<number> }>();
  for (const r of rows) {
    if (r.series !== "predictions") continue;
    const h = hours.get(r.hour) ?? { n: 0, latency: 0, positives: 0, versions: new Set<number>() };
    h.n += r.n;
    h.latency += r.sum;
    if (positive !== undefined) h.positives += r.counts[positive] ?? 0;
    h.versions.add((r as SeriesRow & { version: number }).version);
    hours.set(r.hour, h);
  }
  const perHour = [...hours.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([hour, h]) => ({
      hour: new Date(hour).toISOString(),
      predictions: h.n,
      positive_rate: positive !== undefined && h.n ? h.positives / h.n : null,
      latency_ms_mean: h.n ? h.latency / h.n : null,
      versions: [...h.versions].sort(),
    }));
  const n = sum(perHour.map((h) => h.predictions));
  const positives = sum([...hours.values()].map((h) => h.positives));
  return { n, positives, perHour };
}

/** Why drift is not judged for a kind of model, in plain words; undefined when it is. */
export function uncheckedReason(manifest: unknown): string | undefined {
  const m = manifest as Manifest;
  if ((m.kind === "detection" || m.problem === "detection") && !baselineOf(manifest)?.detection)
    return "drift is not checked for this detection model: it was built before Builder kept a baseline of its boxes and scores; build it again to have one";
  return undefined;
}

/** The unfamiliar-input check's counts in the period: the rate among checked inputs (refused ones are not counted). */
function unfamiliarOf(counts: number[] | undefined) {
  const at = (k: (typeof INPUT_CHECK_FINDINGS)[number]) => counts?.[INPUT_CHECK_FINDINGS.indexOf(k)] ?? 0;
  const checked = at("familiar") + at("unfamiliar");
  return { checked, unfamiliar: at("unfamiliar"), unchecked: at("unchecked"), rate: checked ? at("unfamiliar") / checked : null };
}

export function buildReport(args: {
  experimentId: number;
  model: ModelRow;
  from: Date;
  to: Date;
  rows: SeriesRow[];
  records: LabelledRecord[];
  retentionDays: number;
  /** The AUC's bootstrap resamples (default 200); the alert evaluation, which runs every minute, asks for none. */
  aucResamples?: number;
}) {
  const { model, rows, records } = args;
  const manifest = model.manifest as Manifest;
  const baseline: MonitoringBaseline | undefined = baselineOf(model.manifest);
  const positive = positiveIndex(model.manifest);
  const window: WindowCounts = new Map();
  for (const r of rows) if (r.series !== "predictions") addInto(window, r.series, r.counts);
  const vol = volume(rows, positive);
  const latency = window.get("latency") ?? [];
  const labelled = records.filter((r) => r.label !== null).length;
  const unchecked = uncheckedReason(model.manifest);
  const drift = unchecked
    ? { status: "unchecked" as const, severity: "not_enough_data" as const, features: [], reason: unchecked }
    : {
        ...driftOf(baseline, window),
        reason: baseline ? null : "this model was built before monitoring existed: rebuild it to get a baseline",
      };
  return {
    experiment_id: args.experimentId,
    model_version: model.version,
    from: args.from.toISOString(),
    to: args.to.toISOString(),
    predictions: vol.n,
    per_hour: vol.perHour,
    latency_ms: {
      mean: vol.n ? sum(rows.filter((r) => r.series === "latency").map((r) => r.sum)) / Math.max(1, sum(latency)) : null,
      p50_at_most: latencyQuantile(latency, 0.5),
      p95_at_most: latencyQuantile(latency, 0.95),
    },
    decisions: {
      positive_class: positive !== undefined ? (manifest.classes.find((c) => c.index === positive)?.name ?? String(positive)) : null,
      positive_rate: positive !== undefined && vol.n ? vol.positives / vol.n : null,
      baseline_positive_rate: baseline?.positive_rate ?? null,
    },
    score_distribution: {
      edges: baseline?.score?.edges ?? (manifest.problem === "binary" || manifest.problem === "multiclass" ? PROBABILITY_EDGES : []),
      window: window.get("score") ?? [],
      baseline: baseline?.score?.counts ?? [],
    },
    drift: { ...drift, baseline_n: baseline?.n ?? 0, baseline_source: baseline?.source ?? null },
    unfamiliar_inputs: unfamiliarOf(window.get("input_check")),
    outcomes: {
      records: records.length,
      records_read_at_most: MAX_RECORDS,
      labelled,
      coverage: records.length ? labelled / records.length : null,
    },
    performance: {
      realized: realized(records, positive, args.aucResamples),
      estimated: estimated(records, positive),
      model_card: modelCard(manifest),
    },
    retention_days: args.retentionDays,
  };
}

export type MonitoringReport = ReturnType<typeof buildReport>;
