import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { ApiError } from "../errors.js";
import { encodeJson } from "../http/json-body.js";
import { OutboundRefusal } from "../net/outbound-guard.js";
import { imageAnswer, type ImageAnswerOptions } from "./image-answer.js";
import type { ServedManifest } from "./manifest.js";
import { preprocessInline } from "./preprocess.js";

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
}
const { file, options, manifest, classes } = workerData as Setup;
const port = parentPort!;

let session: ort.InferenceSession;
try {
  session = await ort.InferenceSession.create(file, options);
  port.postMessage({
    type: "loaded",
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    inputShapes: Object.fromEntries((session.inputMetadata ?? []).map((m) => [m.name, (m as { shape?: Array<number | string> }).shape ?? null])),
  });
} catch (err) {
  port.postMessage({ type: "load_error", error: (err as Error).message });
}

type TensorJob = { id: number; input: string; data: Float32Array; dims: number[] };
type ImageJob = { id: number; image: Uint8Array; opts: ImageAnswerOptions & { maxPixels: number } };

async function answerImage(m: ImageJob): Promise<Uint8Array> {
  const spec = manifest!.input.image!;
  const pre = await preprocessInline(m.image, spec, m.opts.maxPixels);
  const out = await session.run({ [manifest!.input.name]: new ort.Tensor("float32", pre.tensor, [1, spec.channels, spec.height, spec.width]) });
  return encodeJson(imageAnswer(manifest!, classes!, out, pre, m.opts));
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

port.on("message", async (m: TensorJob | ImageJob) => {
  try {
    if ("image" in m) {
      const body = await answerImage(m);
      // A whole buffer moves; a view on Node's shared Buffer pool is copied out first.
      const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body);
      port.postMessage({ id: m.id, body: own }, [own.buffer as ArrayBuffer]);
    } else await runTensor(m);
  } catch (err) {
    const e = err as Error;
    const api = err instanceof ApiError ? { status: err.status, code: err.code, details: err.details, refusal: err instanceof OutboundRefusal } : {};
    port.postMessage({ id: m.id, error: e.message, ...api });
  }
});
