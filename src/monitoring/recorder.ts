import type { Logger } from "../logger.js";
import type { ImageDescriptors } from "../serving/image-descriptors.js";
import { baselineOf, binOf, DESCRIPTORS, type DetectionSummary, featureComponent, PROBABILITY_EDGES } from "./baseline.js";
import type { MonitoringRepository, PredictionRecord, SeriesRow } from "./repository.js";

/**
 * What serving keeps of each prediction (issue 49 item 2), held in memory and written every few seconds: per model
 * version and hour, additive aggregates (count, latency, decisions, the score's bins, each input column's bins), and
 * one small record per prediction (its request id, time, version, key, scores and decision; never the input). The
 * request path only adds to maps (record() is synchronous and never awaits the database); flush() writes in the
 * background, and every replica adds its own counts to the same rows (upsert-add), so the sums stay right.
 */

/** The input check's findings, counted in this order in the "input_check" series (src/serving/input-check.ts). */
export const INPUT_CHECK_FINDINGS = ["familiar", "unfamiliar", "unchecked"] as const;

/** Latency bins (ms): interior edges, as the score's. */
export const LATENCY_EDGES_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
/** Records held while the database cannot be written; past this, new ones are dropped (and counted). */
const MAX_PENDING_RECORDS = 200_000;
/** A record keeps at most this many scores (a model with more classes keeps the first ones). */
const MAX_SCORES = 64;

export interface RecordedModel {
  id: string;
  experimentUuid: string;
  manifest: unknown;
}

/** What one prediction leaves: never the input itself, only the bins its values fall in (row). */
export interface Observation {
  requestId: string;
  keyId?: string | null;
  scores: ArrayLike<number>;
  /** The predicted class index (binary, multiclass); null for regression, multilabel and detection. */
  decision: number | null;
  latencyMs: number;
  /** The input check's finding; absent counts as unchecked. */
  inputCheck?: (typeof INPUT_CHECK_FINDINGS)[number];
  /** A table's row as sent to the model (NaN for a missing value): binned here, then forgotten. */
  row?: Float32Array;
  /** An image's descriptors: binned against the baseline's descriptors, then forgotten. */
  image?: ImageDescriptors;
  /** A detection answer's box count, sizes and scores: binned against the baseline's, then forgotten. */
  detection?: DetectionSummary;
}

interface Plan {
  classes: number;
  scoreEdges?: number[];
  /** Binary: the class whose probability is the score; otherwise the top score is binned. */
  scoreIndex?: number;
  columns: Array<{ series: string; edges?: number[]; codes?: number }>;
  /** Image models with descriptors in their baseline: each one's series and bins (edges, or the values' order). */
  descriptors: Array<{
    series: string;
    field: (typeof DESCRIPTORS)[keyof typeof DESCRIPTORS];
    edges?: number[];
    values?: Map<string, number>;
  }>;
  /** Image models with a feature summary in their baseline: each component's series, place in the projection and bins. */
  features: Array<{ series: string; index: number; edges: number[] }>;
  /** Detection models with a baseline of their boxes: the bins of det:boxes, det:size and det:score (absent when not in it). */
  detection?: { boxes?: number[]; size?: number[]; score?: number[] };
}

export interface Series {
  n: number;
  sum: number;
  counts: number[];
}

interface Hour {
  modelId: string;
  experimentUuid: string;
  hour: number;
  series: Map<string, Series>;
}

const plans = new WeakMap<object, Plan>();

function planOf(manifest: unknown): Plan {
  let plan = plans.get(manifest as object);
  if (plan) return plan;
  const m = manifest as {
    problem: string;
    classes: unknown[];
    input: { columns?: Array<{ name: string; type: string; codes?: Record<string, number> }> };
  };
  const b = baselineOf(manifest);
  const classification = m.problem === "binary" || m.problem === "multiclass";
  const byName = new Map((b?.columns ?? []).map((c) => [c.name, c]));
  plan = {
    classes: classification ? m.classes.length : 0,
    scoreEdges: b?.score?.edges ?? (classification ? PROBABILITY_EDGES : undefined),
    scoreIndex: m.problem === "binary" ? (b?.positive_index ?? 1) : m.problem === "regression" ? 0 : undefined,
    columns: (m.input.columns ?? []).map((c) => {
      const base = byName.get(c.name);
      if (c.type === "categorical") return { series: `col:${c.name}`, codes: Object.keys(c.codes ?? {}).length };
      return { series: `col:${c.name}`, edges: base?.type === "numeric" ? base.edges : [] };
    }),
    descriptors: (b?.image?.descriptors ?? []).flatMap((d): Plan["descriptors"] => {
      const field = DESCRIPTORS[d.name as keyof typeof DESCRIPTORS];
      if (!field) return [];
      return d.type === "numeric"
        ? [{ series: d.name, field, edges: d.edges }]
        : [{ series: d.name, field, values: new Map(Object.keys(d.counts).map((v, i) => [v, i])) }];
    }),
    features: (b?.features?.descriptors ?? []).flatMap((d) => {
      const component = featureComponent(d.name);
      return component ? [{ series: d.name, index: component - 1, edges: d.edges }] : [];
    }),
    detection: b?.detection
      ? {
          boxes: b.detection.descriptors.find((d) => d.name === "det:boxes")?.edges,
          size: b.detection.descriptors.find((d) => d.name === "det:size")?.edges,
          score: b.detection.descriptors.find((d) => d.name === "det:score")?.edges,
        }
      : undefined,
  };
  plans.set(manifest as object, plan);
  return plan;
}

function add(hour: Hour, name: string, bins: number, bin: number, value: number, counted = true) {
  let s = hour.series.get(name);
  if (!s) hour.series.set(name, (s = { n: 0, sum: 0, counts: new Array<number>(bins).fill(0) }));
  if (counted) {
    s.n++;
    s.sum += value;
  }
  if (bin >= 0) s.counts[bin]++;
}

/** A detection answer into det:boxes (once per image), det:size and det:score (once per box). */
function addDetection(hour: Hour, p: NonNullable<Plan["detection"]>, d: DetectionSummary) {
  if (p.boxes) add(hour, "det:boxes", p.boxes.length + 1, binOf(p.boxes, d.boxes), d.boxes);
  if (p.size) for (const v of d.sizes) add(hour, "det:size", p.size.length + 1, binOf(p.size, v), v);
  if (p.score) for (const v of d.scores) add(hour, "det:score", p.score.length + 1, binOf(p.score, v), v);
}

/** One descriptor into its bins; a DICOM category on an image that is not a DICOM (undefined) is not counted. */
function addDescriptor(hour: Hour, d: Plan["descriptors"][number], img: ImageDescriptors) {
  const v = d.field === "aspect" ? img.width / Math.max(1, img.height) : img[d.field];
  if (d.edges) {
    if (typeof v === "number" && Number.isFinite(v)) add(hour, d.series, d.edges.length + 1, binOf(d.edges, v), v);
  } else if (d.values && v !== undefined) {
    const i = d.values.get(String(v ?? ""));
    add(hour, d.series, d.values.size + 1, i ?? d.values.size, 0, false);
  }
}

/**
 * The feature summary's projections into their components' bins: one binary search over about ten edges each, so
 * O(k) per prediction (k is at most 8). A component with no value (a shorter projection, NaN) is not counted.
 */
function addFeatures(hour: Hour, features: Plan["features"], values: Float32Array) {
  for (const f of features) {
    const v = f.index < values.length ? values[f.index] : NaN;
    if (Number.isFinite(v)) add(hour, f.series, f.edges.length + 1, binOf(f.edges, v), v);
  }
}

/**
 * Adds one flush's series into another, bin for bin (the same sum the database's upsert does when several replicas
 * write the same hour, and the report does over hours): counts, n and sum are additive.
 */
export function mergeSeries(into: Map<string, Series>, from: Map<string, Series>): void {
  for (const [name, s] of from) {
    const t = into.get(name);
    if (!t) into.set(name, s);
    else {
      t.n += s.n;
      t.sum += s.sum;
      for (let i = 0; i < s.counts.length; i++) t.counts[i] = (t.counts[i] ?? 0) + s.counts[i];
    }
  }
}

export class MonitoringRecorder {
  private hours = new Map<string, Hour>();
  private records: PredictionRecord[] = [];
  private dropped = 0;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;

  constructor(private readonly deps: { repo: MonitoringRepository; logger: Logger; flushMs: number; now?: () => number }) {}

  start(): void {
    const tick = () => {
      void this.flush().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, this.deps.flushMs).unref();
      });
    };
    this.timer = setTimeout(tick, this.deps.flushMs).unref();
  }

  /** Adds one prediction to this hour's aggregates and the pending records. Synchronous: the request never waits. */
  record(model: RecordedModel, o: Observation): void {
    const now = this.deps.now?.() ?? Date.now();
    const hourStart = now - (now % 3_600_000);
    const key = `${model.id}|${hourStart}`;
    let hour = this.hours.get(key);
    if (!hour)
      this.hours.set(key, (hour = { modelId: model.id, experimentUuid: model.experimentUuid, hour: hourStart, series: new Map() }));
    const plan = planOf(model.manifest);
    add(hour, "predictions", plan.classes, o.decision ?? -1, o.latencyMs);
    add(hour, "latency", LATENCY_EDGES_MS.length + 1, binOf(LATENCY_EDGES_MS, o.latencyMs), o.latencyMs);
    const finding = o.inputCheck === "familiar" ? 0 : o.inputCheck === "unfamiliar" ? 1 : 2;
    add(hour, "input_check", INPUT_CHECK_FINDINGS.length, finding, 0, false);
    if (plan.scoreEdges && o.scores.length) {
      let score = plan.scoreIndex !== undefined ? o.scores[plan.scoreIndex] : o.scores[0];
      if (plan.scoreIndex === undefined) for (let i = 1; i < o.scores.length; i++) score = Math.max(score, o.scores[i]);
      if (Number.isFinite(score)) add(hour, "score", plan.scoreEdges.length + 1, binOf(plan.scoreEdges, score), score);
    }
    if (o.row) {
      for (let i = 0; i < plan.columns.length; i++) {
        const c = plan.columns[i];
        const v = o.row[i];
        if (c.codes !== undefined) add(hour, c.series, c.codes + 1, Number.isInteger(v) && v >= 0 && v < c.codes ? v : c.codes, v, false);
        else if (Number.isNaN(v)) add(hour, c.series, c.edges!.length + 2, c.edges!.length + 1, 0, false);
        else add(hour, c.series, c.edges!.length + 2, binOf(c.edges!, v), v);
      }
    }
    if (o.image) {
      for (const d of plan.descriptors) addDescriptor(hour, d, o.image);
      if (o.image.features) addFeatures(hour, plan.features, o.image.features);
    }
    if (o.detection && plan.detection) addDetection(hour, plan.detection, o.detection);
    if (this.records.length >= MAX_PENDING_RECORDS) {
      this.dropped++;
      return;
    }
    const n = Math.min(o.scores.length, MAX_SCORES);
    const scores = new Array<number>(n);
    for (let i = 0; i < n; i++) scores[i] = o.scores[i];
    this.records.push({ modelId: model.id, requestId: o.requestId, at: now, keyId: o.keyId ?? null, scores, decision: o.decision });
  }

  /** Writes what is pending; one flush at a time. What fails to be written is kept for the next one. */
  flush(): Promise<void> {
    return (this.flushing ??= this.write().finally(() => (this.flushing = undefined)));
  }

  /** Shutdown: stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.hours.size === 0 && this.records.length === 0) return;
    const hours = this.hours;
    const records = this.records;
    this.hours = new Map();
    this.records = [];
    const rows: SeriesRow[] = [];
    for (const h of hours.values())
      for (const [series, s] of h.series)
        rows.push({ modelId: h.modelId, experimentUuid: h.experimentUuid, hour: h.hour, series, n: s.n, sum: s.sum, counts: s.counts });
    try {
      // Aggregates and records in one transaction: a retry after a failure never counts a prediction twice.
      await this.deps.repo.write(rows, records);
      if (this.dropped) {
        this.deps.logger.warn({ dropped: this.dropped }, "prediction records dropped while the database could not be written");
        this.dropped = 0;
      }
    } catch (err) {
      this.deps.logger.warn({ err, records: records.length }, "monitoring flush failed; retried at the next one");
      for (const [key, h] of hours) {
        const now = this.hours.get(key);
        if (!now) this.hours.set(key, h);
        else mergeSeries(now.series, h.series);
      }
      this.records = records.concat(this.records).slice(0, MAX_PENDING_RECORDS);
    }
  }
}
