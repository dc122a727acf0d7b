/**
 * The parts of manifest.json (pipelines/contract/manifest.schema.json) that serving reads.
 * The pipelines validate the whole document against the schema when they write it; here we check
 * only what a prediction depends on, so a broken manifest fails at load, not mid-request.
 */

export type ModelKind = "vision_classification" | "detection" | "tabular";
export type Problem = "binary" | "multiclass" | "multilabel" | "regression" | "detection";

export interface ImageSpec {
  width: number;
  height: number;
  channels: 1 | 3;
  resize: "stretch" | "letterbox";
  interpolation: "bilinear" | "nearest" | "bicubic";
  pad_value?: number;
  scale: number;
  mean: number[];
  std: number[];
}

export interface ColumnSpec {
  name: string;
  type: "numeric" | "categorical";
  codes?: Record<string, number>;
  min?: number;
  max?: number;
}

export interface Manifest {
  schema_version: 1;
  kind: ModelKind;
  problem: Problem;
  model_file: string;
  input: { name: string; image?: ImageSpec; columns?: ColumnSpec[] };
  outputs: { scores: string; cam?: string; boxes?: string };
  classes: Array<{ index: number; code: string; name: string }>;
  thresholds?: number[];
  threshold_rule?: string;
  detection?: { score_threshold: number; nms_iou: number; max_detections: number; class_agnostic_nms?: boolean };
  metric?: string;
  metrics: { test: Record<string, unknown>; validation?: Record<string, unknown> };
  [other: string]: unknown;
}

/** Throws with a list of what is missing; returns the manifest typed. */
export function checkManifest(m: unknown): Manifest {
  const problems: string[] = [];
  const man = m as Manifest;
  if (!man || typeof man !== "object") throw new Error("manifest is not an object");
  if (!["vision_classification", "detection", "tabular"].includes(man.kind)) problems.push(`kind ${man.kind}`);
  if (!man.input?.name) problems.push("input.name");
  if (!man.outputs?.scores) problems.push("outputs.scores");
  if (!Array.isArray(man.classes) || man.classes.length === 0) problems.push("classes");
  if (man.kind !== "tabular") {
    const im = man.input?.image;
    if (!im) problems.push("input.image");
    else {
      if (!(im.width >= 1 && im.height >= 1)) problems.push("input.image.width/height");
      if (im.channels !== 1 && im.channels !== 3) problems.push("input.image.channels");
      if (im.mean?.length !== im.channels || im.std?.length !== im.channels) problems.push("input.image.mean/std length");
      if (!["stretch", "letterbox"].includes(im.resize)) problems.push("input.image.resize");
      if (!["bilinear", "nearest", "bicubic"].includes(im.interpolation)) problems.push("input.image.interpolation");
    }
  } else if (!Array.isArray(man.input?.columns) || man.input.columns.length === 0) problems.push("input.columns");
  if (man.kind === "detection" && (!man.detection || !man.outputs?.boxes)) problems.push("detection / outputs.boxes");
  if ((man.problem === "binary" || man.problem === "multilabel") && man.thresholds && man.thresholds.length !== man.classes.length) {
    problems.push("thresholds length");
  }
  if (problems.length) throw new Error(`manifest is missing or has bad: ${problems.join(", ")}`);
  return man;
}

/** {"0": "name", ...} as the seed API answers. */
export function classNames(m: Manifest): Record<string, string> {
  return Object.fromEntries([...m.classes].sort((a, b) => a.index - b.index).map((c) => [String(c.index), c.name]));
}
