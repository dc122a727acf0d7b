import { requestContext } from "../process-guard.js";
import { newRequestId } from "../monitoring/request-id.js";
import type { DetectionSummary } from "../monitoring/baseline.js";
import { descriptorsOf, type ImageDescriptors } from "./image-descriptors.js";
import { inputCheckOf, type InputCheckFinding } from "./input-check.js";
import { JsonBytes } from "./json-encode.js";
import type { LoadedModel } from "./model-cache.js";
import { applyThresholds } from "./postprocess.js";

/**
 * What a prediction tells monitoring (src/monitoring/recorder.ts): the scores and decision of the answer, its
 * latency, the request id it is kept under and the key that asked. Never the input: a table's row is binned by the
 * recorder and dropped; an image is not passed at all.
 */
export interface PredictionObservation {
  requestId: string;
  keyId: string | null;
  scores: ArrayLike<number>;
  decision: number | null;
  latencyMs: number;
  /** What the input check found (input-check.ts): monitoring counts the unfamiliar share. */
  inputCheck: InputCheckFinding;
  row?: Float32Array;
  /** An image's descriptors (size, intensity, DICOM categories): binned by the recorder, never kept as they are. */
  image?: ImageDescriptors;
  /** A detection answer's box count, box sizes and scores: binned by the recorder, the boxes themselves never kept. */
  detection?: DetectionSummary;
}

/**
 * A detection answer's summary: how many boxes, each box's size as the square root of its share of the image's area
 * (when the image's size is known: the image thread notes it) and each box's score. A detection answer is small
 * (boxes and scores), and parsing it costs little beside the detector's own run.
 */
export function detectionSummaryOf(body: Record<string, unknown> | JsonBytes, image?: ImageDescriptors): DetectionSummary | undefined {
  let parsed: Record<string, unknown>;
  try {
    parsed =
      body instanceof JsonBytes
        ? (JSON.parse(Buffer.from(body.bytes.buffer, body.bytes.byteOffset, body.bytes.byteLength).toString("utf8")) as Record<
            string,
            unknown
          >)
        : body;
  } catch {
    return undefined;
  }
  const boxes = Array.isArray(parsed.boxes) ? (parsed.boxes as unknown[]) : undefined;
  if (!boxes) return undefined;
  const scores = Array.isArray(parsed.score) ? (parsed.score as unknown[]).filter((v): v is number => typeof v === "number") : [];
  const area = image && image.width > 0 && image.height > 0 ? image.width * image.height : 0;
  const sizes: number[] = [];
  if (area)
    for (const b of boxes)
      if (Array.isArray(b) && b.length === 4) sizes.push(Math.sqrt((Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1])) / area));
  return { boxes: boxes.length, sizes, scores };
}

export type PredictionObserver = (model: LoadedModel, o: PredictionObservation) => void;

const NO_SCORES: number[] = [];
/** A vision answer starts {"prediccion":[...],"score":[...]: its scores are read from the first bytes, not by parsing the maps. */
const SCORE_KEY = Buffer.from('"score":[');
const HEAD_BYTES = 8192;

/** The scores of an image answer made on a model thread, read from its first bytes; [] when not found there. */
export function scoresOfJson(body: JsonBytes): number[] {
  const head = Buffer.from(body.bytes.buffer, body.bytes.byteOffset, Math.min(body.bytes.byteLength, HEAD_BYTES));
  const at = head.indexOf(SCORE_KEY);
  if (at < 0) return NO_SCORES;
  const end = head.indexOf(0x5d /* ] */, at + SCORE_KEY.length);
  if (end < 0) return NO_SCORES;
  const text = head.toString("latin1", at + SCORE_KEY.length, end);
  if (!text) return NO_SCORES;
  const scores = text.split(",").map(Number);
  return scores.every(Number.isFinite) ? scores : NO_SCORES;
}

/** The predicted class: the one flagged in a binary or multiclass prediccion (one-hot); null otherwise. */
function decisionOf(problem: string, prediccion: unknown): number | null {
  if ((problem !== "binary" && problem !== "multiclass") || !Array.isArray(prediccion)) return null;
  const i = prediccion.indexOf(1);
  return i >= 0 ? i : null;
}

export function observationOf(
  model: LoadedModel,
  body: Record<string, unknown> | JsonBytes,
  latencyMs: number,
  opts: { requestId?: string; keyId?: string | null },
  row?: Float32Array,
): PredictionObservation {
  const requestId = opts.requestId ?? requestContext.getStore()?.requestId ?? newRequestId();
  const keyId = opts.keyId ?? null;
  const m = model.manifest;
  if (body instanceof JsonBytes) {
    const scores = m.kind === "detection" ? NO_SCORES : scoresOfJson(body);
    const image = descriptorsOf(body);
    return {
      requestId,
      keyId,
      scores,
      decision: scores.length ? decisionOf(m.problem, applyThresholds(m.problem, scores, m.thresholds)) : null,
      latencyMs,
      inputCheck: inputCheckOf(body),
      image,
      ...(m.kind === "detection" ? { detection: detectionSummaryOf(body, image) } : {}),
    };
  }
  const scores = Array.isArray(body.score) && m.kind !== "detection" ? (body.score as number[]) : NO_SCORES;
  return {
    requestId,
    keyId,
    scores,
    decision: decisionOf(m.problem, body.prediccion),
    latencyMs,
    inputCheck: inputCheckOf(body),
    row,
    ...(m.kind === "detection" ? { detection: detectionSummaryOf(body) } : {}),
  };
}
