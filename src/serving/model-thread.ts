import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { encodeJson, JsonOut } from "./json-encode.js";
import { imageAnswer, MapMemory } from "./image-answer.js";
import { describeImage } from "./image-descriptors.js";
import { featureProjection, imageFinding } from "./input-check.js";
import { openTurboJpeg, PixelMemory, turboJpegLoadError } from "./jpeg-turbo.js";
import { decodeForModel, TensorMemory, toInputTensor } from "./preprocess.js";
import {
  toThreadFailure,
  type ModelThreadJob,
  type ModelThreadNotice,
  type ModelThreadReply,
  type ModelThreadSetup,
  type Numbered,
} from "./thread-messages.js";

/**
 * One ONNX Runtime session on its own thread, one of a model's threads (model-threads.ts). onnxruntime-node's
 * session.run() is synchronous native code behind a setImmediate, so on the event loop every inference would stall
 * HTTP; here it stalls only this thread. Jobs (thread-messages.ts): `run` (a tensor in, its outputs out) and
 * `predict-image` (the whole prediction: decode, resize, normalise, run, maps or boxes, the answer's JSON, so that
 * no pixel work happens on the event loop).
 */

const { file, options, image } = workerData as ModelThreadSetup;
const port = parentPort!;
const reply = (m: ModelThreadReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const turbo = image?.jpegDecoder === "auto" ? openTurboJpeg() : null;

let session: ort.InferenceSession;
try {
  session = await ort.InferenceSession.create(file, options);
  reply({
    type: "loaded",
    inputNames: [...session.inputNames],
    outputNames: [...session.outputNames],
    inputShapes: Object.fromEntries(
      (session.inputMetadata ?? []).map((m) => [m.name, (m as { shape?: Array<number | string> }).shape ?? null]),
    ),
    ...(image
      ? {
          jpegDecoder: turbo
            ? `libjpeg-turbo (${turbo.library})`
            : `sharp${image.jpegDecoder === "auto" ? ` (no libjpeg-turbo: ${turboJpegLoadError()})` : ""}`,
        }
      : {}),
  });
} catch (err) {
  reply({ type: "load-failed", message: (err as Error).message });
}

/**
 * Memory reused from one image prediction to the next, so that a request allocates little beyond the decoded
 * pixels: the decoded JPEG, the letterbox canvas and the tensor, the Grad-CAM maps, and the answer's JSON, written
 * into shared memory slots that the event loop reads in place and frees once the bytes are on the socket
 * (`free-slot`). Allocating ~2 MB per request made V8 run a full collection every few hundred milliseconds on both
 * threads: the c=1 tail latency. sharp decodes concurrently (on libuv's threads); the rest of a prediction runs one
 * at a time on this thread anyway, and holding `compute` for it makes the reuse safe.
 */
const pixelMemory = new PixelMemory();
const tensorMemory = new TensorMemory();
const mapMemory = new MapMemory();
const SLOTS = 4;
const SLOT_BYTES = 2 * 1024 * 1024;
const slots: SharedArrayBuffer[] = [];
const freeSlots: number[] = [];
const sentSlots = new Set<number>();
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

async function predictImage(m: Numbered<Extract<ModelThreadJob, { type: "predict-image" }>>): Promise<void> {
  const { manifest, classes } = image!;
  const spec = manifest.input.image!;
  const decode = await decodeForModel(m.image, spec, { maxPixels: m.opts.maxPixels, turbo: !!turbo, pixelMemory });
  const { json, slot, inputCheck, descriptors } = await exclusive(async () => {
    const img = await decode();
    // Before the tensor is made: the decoded pixels may be reused memory (pixelMemory) the next image overwrites.
    const descriptors = describeImage(img);
    const pre = toInputTensor(img, spec, tensorMemory);
    const out = await session.run({
      [manifest.input.name]: new ort.Tensor("float32", pre.tensor, [1, spec.channels, spec.height, spec.width]),
    });
    const inputCheck = imageFinding(manifest, out);
    const features = featureProjection(manifest, out);
    if (features) descriptors.features = features; // sent back with the descriptors, binned by the recorder
    const slot = takeSlot();
    const json = encodeJson(
      imageAnswer(manifest, classes, out, pre, { ...m.opts, mapMemory }),
      new JsonOut(slot >= 0 ? slots[slot] : undefined),
    );
    if (slot >= 0 && json.buffer !== slots[slot]) {
      freeSlots.push(slot); // outgrew the slot: it went to a buffer of its own
      return { json, slot: -1, inputCheck, descriptors };
    }
    return { json, slot, inputCheck, descriptors };
  });
  if (slot >= 0) {
    // The event loop reads the slot in place; its memory goes over once, the first time.
    const first = !sentSlots.has(slot);
    sentSlots.add(slot);
    return reply({
      type: "answer-in-slot",
      id: m.id,
      slot,
      length: json.byteLength,
      inputCheck,
      descriptors,
      ...(first ? { shared: slots[slot] } : {}),
    });
  }
  // Moved, not copied, when it is a whole buffer; else copied into one of its own (Buffer.from would use Node's
  // shared pool for small answers, which must never be moved).
  const own = json.byteOffset === 0 && json.byteLength === json.buffer.byteLength ? json : new Uint8Array(json);
  reply({ type: "answer", id: m.id, body: own.buffer as ArrayBuffer, length: own.byteLength, inputCheck, descriptors }, [
    own.buffer as ArrayBuffer,
  ]);
}

async function run(m: Numbered<Extract<ModelThreadJob, { type: "run" }>>): Promise<void> {
  const out = await session.run({ [m.input]: new ort.Tensor("float32", m.data, m.dims) });
  const outputs: Record<string, { data: Float32Array; dims: readonly number[] }> = {};
  const transfer: ArrayBuffer[] = [];
  for (const [name, t] of Object.entries(out)) {
    const data = t.data as Float32Array;
    outputs[name] = { data, dims: t.dims };
    transfer.push(data.buffer as ArrayBuffer);
  }
  reply({ type: "outputs", id: m.id, outputs }, transfer);
}

port.on("message", (m: Numbered<ModelThreadJob> | ModelThreadNotice) => {
  if (m.type === "free-slot") return void freeSlots.push(m.slot);
  const job = m.type === "run" ? run(m) : predictImage(m);
  job.catch((err: unknown) => reply({ type: "failed", id: m.id, failure: toThreadFailure(err) }));
});
