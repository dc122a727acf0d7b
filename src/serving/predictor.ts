import type { Tensor } from "onnxruntime-node";
import { ApiError, type ErrorDetail } from "../errors.js";
import { classNames, type ServedManifest } from "./manifest.js";
import type { LoadedModel } from "./model-cache.js";
import { applyThresholds, camSize, camToGradient, decodeDetections, type GradientMap } from "./postprocess.js";
import { preprocessImage, type Preprocessed } from "./preprocess.js";

/**
 * One prediction, from the request's `message` to the seed's 201 body. Image bytes are fetched by the caller
 * (route) so that this stays free of HTTP and storage; the in-process benchmark calls the same functions.
 */

export interface PredictOptions {
  maxPixels: number;
  gradcamMaxSide: number;
  /** Skip Grad-CAM maps (the benchmark measures their cost this way). */
  noMaps?: boolean;
}

const f32 = (t: Tensor) => t.data as Float32Array;

export async function predictImage(model: LoadedModel, bytes: Buffer, o: PredictOptions) {
  const m = model.manifest;
  const pre = await preprocessImage(bytes, m.input.image!, o.maxPixels);
  const out = await model.session.run(pre.tensor, true); // the tensor is ours to hand over
  return m.kind === "detection" ? detectionBody(m, out, pre) : visionBody(m, out, pre, o);
}

function visionBody(m: ServedManifest, out: Record<string, Tensor>, pre: Preprocessed, o: PredictOptions) {
  const scores = Array.from(f32(out[m.outputs.scores]));
  const prediccion = applyThresholds(m.problem, scores, m.thresholds);
  const { columnas, filas } = camSize(pre.origWidth, pre.origHeight, o.gradcamMaxSide);
  const gradients: Record<string, GradientMap> = {};
  const cam = m.outputs.cam ? out[m.outputs.cam] : undefined;
  if (cam && !o.noMaps) {
    const [, k, h, w] = cam.dims as number[];
    const data = f32(cam);
    const im = m.input.image!;
    // Letterboxed inputs: only the top-left part of the map covers the image.
    const crop = im.resize === "letterbox" ? { w: Math.round((pre.origWidth * pre.scaleX * w) / im.width), h: Math.round((pre.origHeight * pre.scaleY * h) / im.height) } : undefined;
    prediccion.forEach((p, i) => {
      if (p === 1 && i < k) gradients[String(i)] = camToGradient(data.subarray(i * h * w, (i + 1) * h * w), h, w, columnas, filas, crop);
    });
  }
  // Publishing refuses vision models without a CAM output; a model stored before that check says why it has no maps.
  const why = m.outputs.cam ? {} : { gradients_unavailable: "this model was published without a Grad-CAM output (outputs.cam); re-run the experiment to get maps" };
  return { prediccion, score: scores, classes: classNames(m), error: 0, columnas, filas, gradients, ...why };
}

function detectionBody(m: ServedManifest, out: Record<string, Tensor>, pre: Preprocessed) {
  const d = m.detection!;
  const scores = out[m.outputs.scores];
  const k = (scores.dims as number[])[scores.dims.length - 1];
  const r = decodeDetections(f32(out[m.outputs.boxes!]), f32(scores), k, {
    scaleX: pre.scaleX,
    scaleY: pre.scaleY,
    origW: pre.origWidth,
    origH: pre.origHeight,
    scoreThreshold: d.score_threshold,
    nmsIou: d.nms_iou,
    maxDetections: d.max_detections,
    classAgnostic: d.class_agnostic_nms ?? false,
  });
  return { boxes: r.boxes, score: r.score, classification: r.classification, error: 0, classes: classNames(m) };
}

/**
 * Tabular `message`: one number per data column, in manifest order. Categorical columns take the integer
 * code listed in the manifest (the original value as a string is accepted too and mapped to its code).
 */
export function tabularRow(m: ServedManifest, message: unknown): Float32Array {
  const cols = m.input.columns!;
  const expected = cols.map((c) => c.name);
  const bad = (message: string, details: ErrorDetail[] = []) =>
    new ApiError(400, "invalid_request", `${message}; expected ${cols.length} values in this order: ${expected.join(", ")}`, [
      ...details,
      { field: "message", message, expected_columns: expected },
    ]);
  if (!Array.isArray(message)) throw bad("message must be an array of numbers");
  if (message.length !== cols.length) throw bad(`message has ${message.length} values, not ${cols.length}`);
  const row = new Float32Array(cols.length);
  const details: ErrorDetail[] = [];
  cols.forEach((c, i) => {
    const v = message[i];
    if (c.type === "categorical") {
      const codes = c.codes ?? {};
      const allowed = Object.values(codes);
      if (typeof v === "string" && v in codes) row[i] = codes[v];
      else if (typeof v === "number" && Number.isInteger(v) && (allowed.length === 0 || allowed.includes(v))) row[i] = v;
      // The known values are training data (possibly identifiers): the answer says how many, never which.
      else details.push({ field: `message.${i}`, message: `${c.name}: not one of the ${allowed.length} categories seen in training; send the value as written in the training CSV or its integer code (0..${allowed.length - 1})`, column: c.name });
    } else if (typeof v !== "number" || !Number.isFinite(v)) {
      details.push({ field: `message.${i}`, message: `${c.name}: must be a finite number, got ${JSON.stringify(v)}`, column: c.name });
    } else row[i] = v;
  });
  if (details.length) throw bad(`${details.length} bad value${details.length > 1 ? "s" : ""}`, details);
  return row;
}

export async function predictTabular(model: LoadedModel, message: unknown) {
  const m = model.manifest;
  const out = await model.session.run(tabularRow(m, message), true);
  const scores = Array.from(f32(out[m.outputs.scores]));
  if (m.problem === "regression") return { prediccion: [scores[0]], score: [scores[0]], classes: classNames(m), error: 0 };
  return { prediccion: applyThresholds(m.problem, scores, m.thresholds), score: scores, classes: classNames(m), error: 0 };
}
