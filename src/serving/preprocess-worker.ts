import { parentPort } from "node:worker_threads";
import { decodeDicom } from "../dicom/index.js";
import { ApiError } from "../errors.js";
import { decodeJpegTurbo } from "./jpeg-turbo.js";
import type { ImageSpec } from "./manifest.js";
import { normalise, resizeToSpec, type DecodedImage } from "./tensor.js";

// Worker body: resize + normalise one image and send the tensor back (its buffer transferred). The image comes
// decoded (img), or as JPEG bytes that libjpeg-turbo decodes here first ({declined} when it will not).
// A DICOM ({dicom}) is parsed, decoded and rendered here (src/dicom, WASM codecs loaded once per thread).
// {inspect}: a DICOM checked for the dataset report (decoded, header summarised), answered as {inspected}.
type Message =
  | ({ id: number; spec: ImageSpec } & (
      { img: DecodedImage } | { jpeg: Uint8Array; maxPixels: number } | { dicom: Uint8Array; maxPixels: number }
    ))
  | { id: number; inspect: Uint8Array; pixels: boolean; bare: boolean };

// eslint-disable-next-line @typescript-eslint/no-misused-promises -- the listener catches every error and answers it
parentPort!.on("message", async (m: Message) => {
  try {
    if ("inspect" in m) {
      const { image, header } = await decodeDicom(m.inspect, undefined, Infinity, { bare: m.bare });
      const inspected = { header, width: image.width, height: image.height, channels: image.channels, image: m.pixels ? image : undefined };
      return void parentPort!.postMessage({ id: m.id, inspected });
    }
    const img =
      "img" in m
        ? m.img
        : "dicom" in m
          ? (await decodeDicom(m.dicom, m.spec.dicom, m.maxPixels)).image
          : decodeJpegTurbo(m.jpeg, m.maxPixels);
    if (!img) return void parentPort!.postMessage({ id: m.id, declined: true });
    const { pixels, scaleX, scaleY } = resizeToSpec(img, m.spec);
    const tensor = normalise(pixels, m.spec);
    parentPort!.postMessage({ id: m.id, tensor, scaleX, scaleY, width: img.width, height: img.height }, [tensor.buffer as ArrayBuffer]);
  } catch (err) {
    // A domain error keeps its status and code across the thread (a bad DICOM is the client's 415, not a 500).
    const api = err instanceof ApiError ? { status: err.status, code: err.code, details: err.details } : {};
    parentPort!.postMessage({ id: m.id, error: (err as Error).message, ...api });
  }
});
