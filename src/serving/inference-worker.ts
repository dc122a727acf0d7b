import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { ApiError } from "../errors.js";
import { decodeDicom, isDicom } from "../dicom/index.js";
import { encodeJson, JsonOut } from "./json-encode.js";
import { OutboundRefusal } from "../net/outbound-guard.js";
import { imageAnswer, MapMemory, type ImageAnswerOptions } from "./image-answer.js";
import type { ServedManifest } from "./manifest.js";
import { decodeImage, normalise, resizeToSpec } from "./preprocess.js";
import { decodeJpegTurbo, isJpeg, openTurboJpeg, PixelMemory, turboJpegLoadError } from "./jpeg-turbo.js";

/**
 * One ONNX Runtime session on its own thread (one of a model's replicas, see session.ts). onnxruntime-node's
 * session.run() is synchronous native code behind a setImmediate, so on the main thread every inference would
 * stall HTTP; here it stalls only this worker. Two kinds of message:
 * - a tensor: {id, input, data, dims} -> {id, outputs: {name: {data, dims}}} (tabular models, the batched path);
 * - an image: {id, image: bytes, opts} -> {id, body: JSON bytes}: the whole prediction, decode + resize +
 *   normalise + run + maps/boxes + the answer's JSON, so that no pixel work happens on the event loop.
 * Failures answer {id, error, status?, code?, details?, refusal?} (status and code for the client's 4xx).
 */

interface Setup {
  file: string;
  options: ort.InferenceSession.SessionOptions;
  /** Image models: what the image pipeline needs. */
  manifest?: ServedManifest;
  classes?: Record<string, string>;
  /** "auto": JPEGs decode on this thread with libjpeg-turbo when the host has it (jpeg-turbo.ts); "sharp": never. */
  jpegDecoder?: "auto" | "sharp";
}
const { file, options, manifest, classes, jpegDecoder = "auto" } = workerData as Setup;
const port = parentPort!;
const turbo = manifest && jpegDecoder === "auto" ? openTurboJpeg() : null;

let session: ort.InferenceSession;
try {
  session = await ort.InferenceSession.create(file, options);
  port.postMessage({
    type: "loaded",
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    inputShapes: Object.fromEntries(
      (session.inputMetadata ?? []).map((m) => [m.name, (m as { shape?: Array<number | string> }).shape ?? null]),
    ),
    ...(manifest
      ? {
          jpegDecoder: turbo
            ? `libjpeg-turbo (${turbo.library})`
            : `sharp${jpegDecoder === "auto" ? ` (no libjpeg-turbo: ${turboJpegLoadError()})` : ""}`,
        }
      : {}),
  });
} catch (err) {
  port.postMessage({ type: "load_error", error: (err as Error).message });
}

type TensorJob = { id: number; input: string; data: Float32Array; dims: number[] };
type ImageJob = { id: number; image: Uint8Array; opts: ImageAnswerOptions & { maxPixels: number } };

/**
 * Memory reused from one image prediction to the next, so that a request allocates little beyond the decoded
 * pixels: the input tensor and the letterbox canvas (the model's size is fixed), the Grad-CAM maps, and the answer's JSON, written
 * into shared memory slots that the event loop reads in place and frees once the bytes are on the socket
 * ({free: slot}). Allocating ~2 MB per request (tensor, maps' JSON, and the answer moved between threads) made V8
 * run a full GC every few hundred milliseconds on both threads: the c=1 tail latency. Decoding runs concurrently
 * (inside sharp); the rest of a prediction runs one at a time on this thread anyway, and holding `compute` for it
 * makes the reuse safe.
 */
let tensor: Float32Array<ArrayBuffer> | undefined;
let letterboxed: Uint8Array | undefined;
const mapMemory = new MapMemory();
const pixelMemory = new PixelMemory();
const SLOTS = 4;
const SLOT_BYTES = 2 * 1024 * 1024;
const slots: SharedArrayBuffer[] = [];
const freeSlots: number[] = [];
let compute: Promise<unknown> = Promise.resolve();
function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  const run = compute.then(fn);
  compute = run.catch(() => undefined);
  return run;
}

/** A free slot's index (a new one while fewer than SLOTS exist), or -1: all are being written to sockets. */
function takeSlot(): number {
  if (freeSlots.length) return freeSlots.pop()!;
  if (slots.length < SLOTS) return slots.push(new SharedArrayBuffer(SLOT_BYTES)) - 1;
  return -1;
}

/** The answer's JSON: in slot `slot` when it fits there, else in a buffer of its own (slot -1). */
async function answerImage(m: ImageJob): Promise<{ json: Buffer; slot: number }> {
  const spec = manifest!.input.image!;
  // sharp decodes on libuv's threads while this thread runs the previous request; libjpeg-turbo decodes here,
  // inside `compute`, into reused memory (the pixels are resized before the next decode takes it).
  // A DICOM is decoded and rendered on this thread too (src/dicom: WASM codecs, the manifest's dicom rendering).
  const dicom = isDicom(m.image);
  const sharpImg = dicom || (turbo && isJpeg(m.image)) ? undefined : await decodeImage(m.image, m.opts.maxPixels);
  return exclusive(async () => {
    const img =
      sharpImg ??
      (dicom ? (await decodeDicom(m.image, spec.dicom, m.opts.maxPixels)).image : undefined) ??
      decodeJpegTurbo(m.image, m.opts.maxPixels, pixelMemory) ??
      (await decodeImage(m.image, m.opts.maxPixels));
    tensor ??= new Float32Array(spec.channels * spec.height * spec.width);
    letterboxed ??= new Uint8Array(spec.channels * spec.height * spec.width);
    const { pixels, scaleX, scaleY } = resizeToSpec(img, spec, { into: letterboxed });
    normalise(pixels, spec, tensor);
    const out = await session.run({
      [manifest!.input.name]: new ort.Tensor("float32", tensor, [1, spec.channels, spec.height, spec.width]),
    });
    const pre = { tensor, origWidth: img.width, origHeight: img.height, scaleX, scaleY };
    const slot = takeSlot();
    const json = encodeJson(
      imageAnswer(manifest!, classes!, out, pre, { ...m.opts, mapMemory }),
      new JsonOut(slot >= 0 ? slots[slot] : undefined),
    );
    if (slot >= 0 && json.buffer !== slots[slot]) {
      freeSlots.push(slot); // outgrew the slot: it went to a buffer of its own
      return { json, slot: -1 };
    }
    return { json, slot };
  });
}

async function runTensor(m: TensorJob) {
  const out = await session.run({ [m.input]: new ort.Tensor("float32", m.data, m.dims) });
  const outputs: Record<string, { data: Float32Array; dims: readonly number[] }> = {};
  const transfer: ArrayBuffer[] = [];
  for (const [name, t] of Object.entries(out)) {
    const data = t.data as Float32Array;
    outputs[name] = { data, dims: t.dims };
    transfer.push(data.buffer as ArrayBuffer);
  }
  port.postMessage({ id: m.id, outputs }, transfer);
}

const sentSlots = new Set<number>();

// eslint-disable-next-line @typescript-eslint/no-misused-promises -- the listener catches every error and answers it
port.on("message", async (m: TensorJob | ImageJob | { free: number }) => {
  if ("free" in m) {
    freeSlots.push(m.free);
    return;
  }
  try {
    if ("image" in m) {
      const { json, slot } = await answerImage(m);
      if (slot >= 0) {
        // The event loop reads the slot in place; its memory goes over once, the first time.
        const first = !sentSlots.has(slot);
        sentSlots.add(slot);
        port.postMessage({ id: m.id, slot, length: json.byteLength, ...(first ? { shared: slots[slot] } : {}) });
      } else {
        // Moved, not copied, when it is a whole buffer; else copied into one of its own (Buffer.from would use
        // Node's shared pool for small answers, which must never be moved).
        const own = json.byteOffset === 0 && json.byteLength === json.buffer.byteLength ? json : new Uint8Array(json);
        port.postMessage({ id: m.id, body: own.buffer, length: own.byteLength }, [own.buffer as ArrayBuffer]);
      }
    } else await runTensor(m);
  } catch (err) {
    const e = err as Error;
    const api =
      err instanceof ApiError ? { status: err.status, code: err.code, details: err.details, refusal: err instanceof OutboundRefusal } : {};
    port.postMessage({ id: m.id, error: e.message, ...api });
  }
});
