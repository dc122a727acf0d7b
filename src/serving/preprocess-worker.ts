import { parentPort } from "node:worker_threads";
import { normalise, resizeToSpec } from "./tensor.js";

// Worker body: resize + normalise one decoded image and send the tensor back (its buffer transferred).
parentPort!.on("message", (m: { id: number; img: Parameters<typeof resizeToSpec>[0]; spec: Parameters<typeof resizeToSpec>[1] }) => {
  try {
    const { pixels, scaleX, scaleY } = resizeToSpec(m.img, m.spec);
    const tensor = normalise(pixels, m.spec);
    parentPort!.postMessage({ id: m.id, tensor, scaleX, scaleY }, [tensor.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
