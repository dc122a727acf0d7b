import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";

/**
 * One ONNX Runtime session on its own thread. onnxruntime-node's session.run() is synchronous native code
 * behind a setImmediate, so on the main thread every inference would stall HTTP, decoding and maps; here it
 * stalls only this worker. Messages: {id, input, data, dims} -> {id, outputs: {name: {data, dims}}} or {id, error}.
 */

const { file, options } = workerData as { file: string; options: ort.InferenceSession.SessionOptions };
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

port.on("message", async (m: { id: number; input: string; data: Float32Array; dims: number[] } | { type: "release" }) => {
  if ("type" in m) {
    await session?.release().catch(() => undefined);
    port.postMessage({ type: "released" });
    return;
  }
  try {
    const out = await session.run({ [m.input]: new ort.Tensor("float32", m.data, m.dims) });
    const outputs: Record<string, { data: Float32Array; dims: readonly number[] }> = {};
    const transfer: ArrayBuffer[] = [];
    for (const [name, t] of Object.entries(out)) {
      const data = t.data as Float32Array;
      outputs[name] = { data, dims: t.dims };
      transfer.push(data.buffer as ArrayBuffer);
    }
    port.postMessage({ id: m.id, outputs }, transfer);
  } catch (err) {
    port.postMessage({ id: m.id, error: (err as Error).message });
  }
});
