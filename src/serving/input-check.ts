import type { Tensor } from "onnxruntime-node";
import { ApiError, msg } from "../errors.js";
import type { JsonBytes } from "./json-encode.js";
import type { ServedManifest } from "./manifest.js";

/**
 * Unfamiliar inputs (issue 49 item 5; docs/monitoring.md#unfamiliar-inputs): does an input look like the data the
 * model was built on? The pipelines freeze what that means in the manifest's `input_check` (images: a feature distance
 * and intensity range computed by model.onnx itself, pipelines/builder_pipelines/vision/input_check.py; tables: each
 * numeric column's training range, pipelines/builder_pipelines/tabular/input_check.py), calibrated on validation data.
 *
 * The seed's 201 body never changes: the finding travels beside it. predict.ts notes it against the body object it
 * returns (a WeakMap, so nothing is kept once the answer is gone and serving's signature stays as it is), the edge
 * reads it into the `x-input-check` header, batch scoring into its results' `input_check` column. A model whose
 * `mode` is `refuse` answers an unfamiliar input with 422 `unfamiliar_input` (error 1) instead.
 */

export type InputCheckFinding = "familiar" | "unfamiliar" | "unchecked";
export const INPUT_CHECK_HEADER = "x-input-check";

type Body = Record<string, unknown> | JsonBytes;
const findings = new WeakMap<object, InputCheckFinding>();

/** What predict found for this answer: "unchecked" for a model built before the check (or a detection model). */
export function inputCheckOf(body: Body): InputCheckFinding {
  return findings.get(body) ?? "unchecked";
}

/** Records a finding against an answer (the placements, where the check output is read). */
export function noteInputCheck(body: Body, finding: InputCheckFinding): void {
  if (finding !== "unchecked") findings.set(body, finding);
}

/** The response header for an answer. */
export function inputCheckHeaders(body: Body): Record<string, string> {
  return { [INPUT_CHECK_HEADER]: inputCheckOf(body) };
}

export class UnfamiliarInput extends ApiError {
  constructor(kind: "image" | "row") {
    super(422, "unfamiliar_input", msg(kind === "image" ? "serving.unfamiliar_image" : "serving.unfamiliar_row"));
  }
}

/**
 * Records the finding against the answer, or refuses: with mode `refuse` an unfamiliar input throws UnfamiliarInput
 * (an image answer's memory is given back to its thread first). Returns the body for chaining.
 */
export function settle<B extends Body>(m: ServedManifest, body: B, finding: InputCheckFinding): B {
  if (finding === "unfamiliar" && m.input_check?.mode === "refuse") {
    (body as JsonBytes).release?.();
    throw new UnfamiliarInput(m.kind === "tabular" ? "row" : "image");
  }
  noteInputCheck(body, finding);
  return body;
}

/**
 * Images: the model's check output ([1, 6]: feature distance, pixel distance, input mean, std, roughness and flatness) against the manifest's
 * calibrated threshold and intensity ranges. Runs where the answer is built (a model thread, or the event loop for
 * the batching placement); a model without the check is "unchecked".
 */
export function imageFinding(m: ServedManifest, out: Record<string, Tensor>): InputCheckFinding {
  const spec = m.input_check?.image;
  const t = spec ? out[spec.output] : undefined;
  if (!spec || !t) return "unchecked";
  const [features, pixels, mean, std, rough, flat] = t.data as Float32Array;
  // Written so that NaN (a broken input) counts as outside.
  const inside = (v: number, [lo, hi]: readonly [number, number]) => v >= lo && v <= hi;
  const familiar =
    features <= spec.threshold &&
    pixels <= spec.pixel_threshold &&
    inside(mean, spec.intensity_mean) &&
    inside(std, spec.intensity_std) &&
    inside(rough, spec.roughness) &&
    inside(flat, spec.flatness);
  return familiar ? "familiar" : "unfamiliar";
}

/** Where the feature summary's projections start in the check output: after the six values the rule reads. */
export const PROJECTION_OFFSET = 6;

/**
 * The feature summary's projections of this image (the check output's values after the rule's six; the manifest's
 * `projected_components`), copied out so that the tensor's memory is not kept, for monitoring's feature drift.
 * Undefined for a model built before they were served. k floats: the cost on the request's path is a small copy.
 */
export function featureProjection(m: ServedManifest, out: Record<string, Tensor>): Float32Array | undefined {
  const spec = m.input_check?.image;
  const k = spec?.projected_components ?? 0;
  const t = k > 0 ? out[spec!.output] : undefined;
  if (!t) return undefined;
  const data = t.data as Float32Array;
  if (data.length < PROJECTION_OFFSET + k) return undefined;
  return data.slice(PROJECTION_OFFSET, PROJECTION_OFFSET + k);
}

/** Per model: the manifest's table check as arrays by input position, worked out once. */
interface TableRule {
  index: number[];
  low: number[];
  high: number[];
  scale: number[];
  threshold: number;
}
const tableRules = new WeakMap<ServedManifest, TableRule | null>();

function tableRule(m: ServedManifest): TableRule | null {
  let rule = tableRules.get(m);
  if (rule === undefined) {
    const spec = m.input_check?.table;
    const position = new Map((m.input.columns ?? []).map((c, i) => [c.name, i]));
    const cols = spec?.columns.filter((c) => position.has(c.name)) ?? [];
    rule = spec
      ? {
          index: cols.map((c) => position.get(c.name)!),
          low: cols.map((c) => c.low),
          high: cols.map((c) => c.high),
          scale: cols.map((c) => c.scale),
          threshold: spec.threshold,
        }
      : null;
    tableRules.set(m, rule);
  }
  return rule;
}

/**
 * A table row's score: the largest distance of a numeric value outside its column's training range, in units of
 * that column's spread (0 when every value is inside; a missing value, NaN, is not counted: the model was trained
 * with gaps there). null for a model without the check.
 */
export function rowScore(m: ServedManifest, row: Float32Array): number | null {
  const r = tableRule(m);
  if (!r) return null;
  let worst = 0;
  for (let j = 0; j < r.index.length; j++) {
    const v = row[r.index[j]];
    const excess = v < r.low[j] ? r.low[j] - v : v > r.high[j] ? v - r.high[j] : 0;
    if (excess > 0) worst = Math.max(worst, excess / r.scale[j]);
  }
  return worst;
}

export function rowFinding(m: ServedManifest, row: Float32Array): InputCheckFinding {
  const score = rowScore(m, row);
  if (score === null) return "unchecked";
  return score > tableRule(m)!.threshold ? "unfamiliar" : "familiar";
}
