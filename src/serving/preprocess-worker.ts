import { parentPort } from "node:worker_threads";
import { decodeJpegTurbo } from "./jpeg-turbo.js";
import type { ImageSpec } from "./manifest.js";
import { normalise, resizeToSpec, type DecodedImage } from "./tensor.js";

// Worker body: resize + normalise one image and send the tensor back (its buffer transferred). The image comes
// decoded (img), or as JPEG bytes that libjpeg-turbo decodes here first ({declined} when it will not).
type Message = { id: number; spec: ImageSpec } & ({ img: DecodedImage } | { jpeg: Uint8Array; maxPixels: number });

parentPort!.on("message", (m: Message) => {
  try {
    const img = "img" in m ? m.img : decodeJpegTurbo(m.jpeg, m.maxPixels);
    if (!img) return void parentPort!.postMessage({ id: m.id, declined: true });
    const { pixels, scaleX, scaleY } = resizeToSpec(img, m.spec);
    const tensor = normalise(pixels, m.spec);
    parentPort!.postMessage({ id: m.id, tensor, scaleX, scaleY, width: img.width, height: img.height }, [tensor.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
