import type { Tensor } from "onnxruntime-node";
import { ApiError, type ErrorDetail, msg, detail, type Message } from "../errors.js";
import { classNames, type ServedManifest } from "./manifest.js";
import type { LoadedModel } from "./model-cache.js";
import type { JsonBytes } from "./json-encode.js";
import { applyThresholds } from "./postprocess.js";
import { inputCheckOf, rowFinding, settle } from "./input-check.js";
import type { ImagePredictOptions } from "./predictor.js";

/**
 * One prediction, from the request's `message` to the seed's 201 body. Image bytes are fetched by the caller
 * (route) so that this stays free of HTTP and storage; the in-process benchmark calls the same functions. Where the
 * work runs is the model's placement (placement.ts); the vision and detection bodies are built in image-answer.ts.
 */

export type PredictOptions = ImagePredictOptions;

const f32 = (t: Tensor) => t.data as Float32Array;

/** The 201 body of an image prediction, as JSON bytes (release them once written: see Predictor.predictImage). */
export async function predictImage(model: LoadedModel, bytes: Uint8Array, o: PredictOptions): Promise<JsonBytes> {
  const body = await model.predictor.predictImage(bytes, o);
  // The placement noted what the model's check output says (input-check.ts); `refuse` turns unfamiliar into a 422.
  return settle(model.manifest, body, inputCheckOf(body));
}

/** What checking a row needs from the manifest, worked out once per loaded model instead of per request. */
interface RowSpec {
  columns: NonNullable<ServedManifest["input"]["columns"]>;
  expected: string[];
  /** Per column: the allowed integer codes of a categorical column (undefined for numeric ones). */
  allowed: Array<number[] | undefined>;
  classes: Record<string, string>;
}
const rowSpecs = new WeakMap<ServedManifest, RowSpec>();

function rowSpec(m: ServedManifest): RowSpec {
  let spec = rowSpecs.get(m);
  if (!spec) {
    const columns = m.input.columns!;
    spec = {
      columns,
      expected: columns.map((c) => c.name),
      allowed: columns.map((c) => (c.type === "categorical" ? Object.values(c.codes ?? {}) : undefined)),
      classes: classNames(m),
    };
    rowSpecs.set(m, spec);
  }
  return spec;
}

/**
 * Tabular `message`: one number per data column, in manifest order. Categorical columns take the integer
 * code listed in the manifest (the original value as a string is accepted too and mapped to its code). A numeric
 * column that had missing values in training (`missing` in the manifest) takes null for an unknown value: the graph
 * gets NaN, which the model was trained with (pipelines/builder_pipelines/tabular/models.py).
 */
export function tabularRow(m: ServedManifest, message: unknown): Float32Array {
  const { columns: cols, expected, allowed: allowedCodes } = rowSpec(m);
  const bad = (problem: Message, details: ErrorDetail[] = []) =>
    new ApiError(400, "invalid_request", msg("serving.row_problem", { problem, count: cols.length, columns: expected.join(", ") }), [
      ...details,
      detail("message", problem, { expected_columns: expected }),
    ]);
  if (!Array.isArray(message)) throw bad(msg("serving.row_not_array"));
  if (message.length !== cols.length) throw bad(msg("serving.row_length", { got: message.length, expected: cols.length }));
  const row = new Float32Array(cols.length);
  let details: ErrorDetail[] | undefined;
  for (let i = 0; i < cols.length; i++) {
    const c = cols[i];
    const v: unknown = message[i];
    if (c.type === "categorical") {
      const codes = c.codes ?? {};
      const allowed = allowedCodes[i]!;
      // Own keys only: `in` would also accept inherited names ("toString", "constructor") and send NaN to the model.
      if (typeof v === "string" && Object.hasOwn(codes, v)) row[i] = codes[v];
      else if (typeof v === "number" && Number.isInteger(v) && (allowed.length === 0 || allowed.includes(v))) row[i] = v;
      // The known values are training data (possibly identifiers): the answer says how many, never which.
      else
        (details ??= []).push(
          detail(`message.${i}`, msg("serving.not_a_category", { column: c.name, count: allowed.length, last: allowed.length - 1 }), {
            column: c.name,
          }),
        );
    } else if (v === null && c.missing) {
      row[i] = NaN;
    } else if (typeof v !== "number" || !Number.isFinite(v)) {
      const key = v === null ? "serving.null_not_trained" : c.missing ? "serving.not_finite_or_null" : "serving.not_finite";
      (details ??= []).push(
        detail(`message.${i}`, msg(key, { column: c.name, got: JSON.stringify(v) ?? "undefined" }), { column: c.name }),
      );
    } else row[i] = v;
  }
  if (details) throw bad(msg("serving.bad_values", { count: details.length }), details);
  return row;
}

/** seen.row, when given, receives a copy of the row as the model gets it (monitoring bins it; it is never kept). */
export async function predictTabular(model: LoadedModel, message: unknown, seen?: { row?: Float32Array }) {
  const m = model.manifest;
  const { classes } = rowSpec(m);
  const row = tabularRow(m, message);
  // Checked before the run: the run may move the row's buffer to a thread. A refused row never reaches the model.
  const finding = rowFinding(m, row);
  settle(m, {}, finding);
  // A copy: the model may be handed the row itself (a thread placement moves its buffer).
  if (seen) seen.row = row.slice();
  const out = await model.predictor.run(row, true);
  const scores = Array.from(f32(out[m.outputs.scores]));
  // A fresh copy of the class names per answer: the caller owns the body it is given.
  if (m.problem === "regression")
    return settle(m, { prediccion: [scores[0]], score: [scores[0]], classes: { ...classes }, error: 0 }, finding);
  return settle(
    m,
    { prediccion: applyThresholds(m.problem, scores, m.thresholds), score: scores, classes: { ...classes }, error: 0 },
    finding,
  );
}
