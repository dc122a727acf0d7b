import type { Manifest } from "../contract/types.js";
import { viewErrors } from "../contract/validate.js";

/**
 * Serving's view of manifest.json: the contract's one Manifest type cut down to what a prediction reads, checked
 * against the same schema file (pipelines/contract/manifest.schema.json) for those fields, plus the invariants only
 * serving cares about (a JSON Schema cannot say "mean has `channels` entries"). Figures, provenance and the rules
 * between problem and metric are not read here, so a model published before a later rule about them keeps serving. A broken manifest fails at
 * load, not mid-request.
 */
export const SERVED_FIELDS = [
  "schema_version",
  "kind",
  "problem",
  "model_file",
  "input",
  "outputs",
  "classes",
  "thresholds",
  "threshold_rule",
  "detection",
  "metrics",
  "metric",
  "input_check",
] as const;
/** Models published before every manifest named its metric (regression had none) still serve. */
const OPTIONAL_HERE = ["metric"] as const;

export type ServedManifest = Pick<Manifest, Exclude<(typeof SERVED_FIELDS)[number], (typeof OPTIONAL_HERE)[number]>> &
  Partial<Pick<Manifest, "metric">>;
export type { ColumnSpec, ImageSpec } from "../contract/types.js";

function servingProblems(m: ServedManifest): string[] {
  const problems: string[] = [];
  if (m.classes.length === 0) problems.push("classes: must not be empty");
  if (m.kind === "tabular") {
    if (!m.input.columns?.length) problems.push("input.columns: a tabular model needs its columns");
  } else if (!m.input.image) problems.push("input.image: an image model needs its image spec");
  else if (m.input.image.mean.length !== m.input.image.channels || m.input.image.std.length !== m.input.image.channels) {
    problems.push("input.image.mean/std: need one entry per channel");
  }
  if (m.kind === "detection" && (!m.detection || !m.outputs.boxes))
    problems.push("detection / outputs.boxes: a detection model needs both");
  if ((m.problem === "binary" || m.problem === "multilabel") && m.thresholds && m.thresholds.length !== m.classes.length) {
    problems.push("thresholds: need one per class");
  }
  return problems;
}

/** Throws listing every problem; returns the manifest typed as serving's view. */
export function checkManifest(m: unknown): ServedManifest {
  const schemaProblems = viewErrors("manifest", SERVED_FIELDS, m, OPTIONAL_HERE);
  const problems = schemaProblems.length ? schemaProblems : servingProblems(m as ServedManifest);
  if (problems.length) throw new Error(`manifest is missing or has bad: ${problems.join(", ")}`);
  return m as ServedManifest;
}

/** {"0": "name", ...} as the seed API answers. */
export function classNames(m: Pick<Manifest, "classes">): Record<string, string> {
  return Object.fromEntries([...m.classes].sort((a, b) => a.index - b.index).map((c) => [String(c.index), c.name]));
}
