import type { Tensor } from "onnxruntime-node";
import type { ServedManifest } from "./manifest.js";
import { applyThresholds, camSize, camToGradient, decodeDetections, type GradientMap } from "./postprocess.js";
import type { Preprocessed } from "./tensor.js";

/**
 * From a model's raw outputs to the seed's 201 body for an image model. Shared by the image pipeline on the
 * model threads (model-thread.ts: the threads placement, the usual one) and by the batching placement on the event loop
 * (placement-batching.ts), so both answer alike. Field order is the seed contract's.
 */

export interface ImageAnswerOptions {
  gradcamMaxSide: number;
  /** Skip Grad-CAM maps (the benchmark measures their cost this way). */
  noMaps?: boolean;
  /** Memory for the maps, reused from one answer to the next (a caller that encodes each answer at once). */
  mapMemory?: MapMemory;
}

/**
 * Map buffers that a worker thread reuses: the i-th map of an answer goes into buffer i, so the answer is valid
 * until the next one is built. A 512x384 map is 196 KB; allocating it per request adds to the external memory
 * that makes V8 run full collections (the tail latency, see model-thread.ts).
 */
export class MapMemory {
  private readonly buffers: Uint8Array[] = [];

  buffer(i: number, bytes: number): Uint8Array {
    if ((this.buffers[i]?.length ?? -1) < bytes) this.buffers[i] = new Uint8Array(bytes);
    return this.buffers[i];
  }
}

const f32 = (t: Tensor) => t.data as Float32Array;

export function imageAnswer(
  m: ServedManifest,
  classes: Record<string, string>,
  out: Record<string, Tensor>,
  pre: Preprocessed,
  o: ImageAnswerOptions,
) {
  return m.kind === "detection" ? detectionBody(m, classes, out, pre) : visionBody(m, classes, out, pre, o);
}

function visionBody(
  m: ServedManifest,
  classes: Record<string, string>,
  out: Record<string, Tensor>,
  pre: Preprocessed,
  o: ImageAnswerOptions,
) {
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
    const crop =
      im.resize === "letterbox"
        ? { w: Math.round((pre.origWidth * pre.scaleX * w) / im.width), h: Math.round((pre.origHeight * pre.scaleY * h) / im.height) }
        : undefined;
    let n = 0;
    prediccion.forEach((p, i) => {
      if (p !== 1 || i >= k) return;
      const into = o.mapMemory?.buffer(n++, columnas * filas);
      gradients[String(i)] = camToGradient(data.subarray(i * h * w, (i + 1) * h * w), h, w, columnas, filas, crop, into);
    });
  }
  // Publishing refuses vision models without a CAM output; a model stored before that check says why it has no maps.
  const why = m.outputs.cam
    ? {}
    : { gradients_unavailable: "this model was published without a Grad-CAM output (outputs.cam); re-run the experiment to get maps" };
  return { prediccion, score: scores, classes, error: 0, columnas, filas, gradients, ...why };
}

function detectionBody(m: ServedManifest, classes: Record<string, string>, out: Record<string, Tensor>, pre: Preprocessed) {
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
  return { boxes: r.boxes, score: r.score, classification: r.classification, error: 0, classes };
}
