/**
 * The monitoring baseline a pipeline freezes into manifest.json (`monitoring_baseline`, issue 49 item 1): aggregates
 * of the model's validation and test patients, never rows. Serving bins each prediction the same way (binOf), so a
 * window's counts and the baseline's are compared bin for bin (drift.ts).
 */

export interface NumericBaseline {
  name: string;
  type: "numeric";
  /** Interior bin edges (deciles, duplicates removed): len(edges)+1 bins; a value goes to the count of edges <= it. */
  edges: number[];
  counts: number[];
  /** Rows with no value (NaN), not in counts. */
  missing: number;
  quantiles: { p05: number; p25: number; p50: number; p75: number; p95: number };
}

export interface CategoricalBaseline {
  name: string;
  type: "categorical";
  /** Rows per category code (the manifest's integer code, as a string key). */
  counts: Record<string, number>;
}

export interface ScoreBaseline {
  /** Bin edges over the reported score (binary: the positive class's probability; multiclass: the top one; regression: deciles). */
  edges: number[];
  counts: number[];
}

/**
 * An image descriptor (serving/image-descriptors.ts): numeric ones binned like a table's numeric column; categorical
 * ones (img:channels, img:modality, img:manufacturer, img:body_part) counted per value seen in the baseline, in the
 * order of `counts`' keys, a value not among them counted in one more bin ("other").
 */
export type DescriptorBaseline = NumericBaseline | CategoricalBaseline;

/** The descriptors' names, the serving side's field each reads. */
export const DESCRIPTORS = {
  "img:width": "width",
  "img:height": "height",
  "img:aspect": "aspect",
  "img:channels": "channels",
  "img:mean": "mean",
  "img:std": "std",
  "img:modality": "modality",
  "img:manufacturer": "manufacturer",
  "img:body_part": "bodyPart",
} as const;

export interface MonitoringBaseline {
  schema_version: 1;
  /** Which rows: "validation and test patients". */
  source: string;
  n: number;
  /** Binary: the class index that counts as a positive decision (the clinical positive class). */
  positive_index?: number;
  /** The share of baseline rows flagged positive at the manifest's thresholds. */
  positive_rate?: number;
  columns?: Array<NumericBaseline | CategoricalBaseline>;
  /** Image models: descriptors of the validation and test images (no pixel, no file name, no patient value). */
  image?: { images: number; descriptors: DescriptorBaseline[] };
  /**
   * Detection models: what the model served on the validation and test images, binned as numeric columns:
   * det:boxes (boxes per image), det:size (each box's square root of its share of the image's area), det:score
   * (each box's score). Never a box's coordinates.
   */
  detection?: { images: number; boxes: number; descriptors: NumericBaseline[] };
  /**
   * Image models built since the feature summary was served: the network's own penultimate-layer features of the
   * baseline images, projected on the unfamiliar-input check's first principal directions and standardised
   * (img:feature:1..k, FEATURE_SERIES), each binned at its deciles as a numeric column. Counts only: no image, no
   * feature vector. Absent on older models: no drift row for the features then.
   */
  features?: { images: number; source?: string; descriptors: NumericBaseline[] };
  score?: ScoreBaseline;
}

/** The series (and baseline descriptor) name of the feature summary's component i (0-based): img:feature:1, ... */
export const featureSeries = (i: number) => `img:feature:${i + 1}`;
/** Which component a feature series is (1-based), or undefined for another name. */
export function featureComponent(name: string): number | undefined {
  const m = /^img:feature:(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** The score bins of classification models: 20 of width 0.05 (interior edges 0.05 .. 0.95). */
export const PROBABILITY_EDGES = Array.from({ length: 19 }, (_, i) => Math.round((i + 1) * 5) / 100);

/** The bin of x among interior edges (sorted): the number of edges <= x, so len(edges)+1 bins (numpy's searchsorted right). */
export function binOf(edges: readonly number[], x: number): number {
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (edges[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A detection answer's summary for monitoring: boxes on the image, each box's size (0..1, when the image's size is known) and score. */
export interface DetectionSummary {
  boxes: number;
  sizes: number[];
  scores: number[];
}

export function baselineOf(manifest: unknown): MonitoringBaseline | undefined {
  const b = (manifest as { monitoring_baseline?: MonitoringBaseline }).monitoring_baseline;
  return b && b.schema_version === 1 ? b : undefined;
}
