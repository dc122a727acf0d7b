import { parentPort } from "node:worker_threads";
import { decodeDicom } from "../dicom/index.js";
import { describeImage } from "./image-descriptors.js";
import { openTurboJpeg } from "./jpeg-turbo.js";
import { decodeForModel, toInputTensor } from "./preprocess.js";
import { toThreadFailure, type Numbered, type PreprocessJob, type PreprocessReply } from "./thread-messages.js";

// A preprocessing thread (preprocess-pool.ts): image bytes -> the model's input tensor by preprocess.ts's one way,
// sent back with its buffer moved; or a DICOM checked for the dataset report (decoded whole, header summarised).
// A DICOM's WASM codecs and libjpeg-turbo are loaded once per thread.

const port = parentPort!;
const reply = (m: PreprocessReply, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

async function handle(m: Numbered<PreprocessJob>): Promise<void> {
  switch (m.type) {
    case "preprocess": {
      const turbo = m.jpegDecoder === "auto" && openTurboJpeg() !== null;
      const decode = await decodeForModel(m.bytes, m.spec, { maxPixels: m.maxPixels, turbo });
      const img = await decode();
      const descriptors = describeImage(img);
      const { tensor, scaleX, scaleY } = toInputTensor(img, m.spec);
      return reply({ type: "tensor", id: m.id, tensor, scaleX, scaleY, width: img.width, height: img.height, descriptors }, [
        tensor.buffer as ArrayBuffer,
      ]);
    }
    case "inspect-dicom": {
      const { image, header } = await decodeDicom(m.bytes, m.rendering, m.maxPixels, { bare: m.bare });
      const inspected = { header, width: image.width, height: image.height, channels: image.channels, image: m.pixels ? image : undefined };
      return reply({ type: "inspected", id: m.id, inspected });
    }
  }
}

port.on("message", (m: Numbered<PreprocessJob>) => {
  // A domain error keeps its status and code across the thread (a bad DICOM is the client's 415, not a 500).
  handle(m).catch((err: unknown) => reply({ type: "failed", id: m.id, failure: toThreadFailure(err) }));
});
