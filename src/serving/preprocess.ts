import sharp, { type Sharp } from "sharp";
import { decodeDicom, isDicom } from "../dicom/index.js";
import { msg } from "../errors.js";
import { refuse } from "../net/outbound-guard.js";
import type { ImageSpec } from "./manifest.js";
import { decodeJpegTurbo, isJpeg, type PixelMemory } from "./jpeg-turbo.js";
import { storedGreyFromHeader } from "./stored-channels.js";
import { preprocessPool } from "./preprocess-pool.js";
import { normalise, resizeToSpec, type DecodedImage, type Preprocessed } from "./tensor.js";

export { letterboxGeometry, normalise, resizeToSpec, toChannels } from "./tensor.js";
export type { DecodedImage, Preprocessed } from "./tensor.js";

/**
 * Image bytes -> the model's input tensor, exactly as manifest input.image states and as the pipelines compute it
 * with Pillow (builder_pipelines.vision.preprocess, detection.boxes.letterbox). The one way an image becomes a
 * tensor: the model threads (model-thread.ts) and the preprocessing threads (preprocess-thread.ts) both call
 * decodeForModel and toInputTensor below; the event loop only hands bytes to a thread (preprocessImage).
 * - decode: a DICOM by the manifest's rendering (src/dicom); a JPEG by libjpeg-turbo on the calling thread when the
 *   host has it (jpeg-turbo.ts); everything else, and any JPEG libjpeg-turbo declines, by sharp;
 * - drop alpha, greyscale by ITU-R 601-2 luminance (Pillow's L24 rounding) or RGB; resize like Pillow (resample.ts)
 *   by stretch or letterbox (top-left, pad bottom/right with pad_value);
 * - float32 x * scale, (x - mean[c]) / std[c], NCHW.
 */

/**
 * Decodes in one pass of the pixels (plus a read of the header, to tell a grey file): sharp refuses more than
 * maxPixels before decoding any pixel (decompression bombs). Only the rare cases pay a second look: a CMYK image is
 * decoded again converted to sRGB, and an image sharp refuses has its header read to tell why (over the limit, with
 * its size, or undecodable).
 */
export async function decodeImage(bytes: Buffer | Uint8Array, maxPixels: number): Promise<DecodedImage> {
  let r = await rawPixels(bytes, maxPixels, false);
  if (r.info.channels === 4) r = await rawPixels(bytes, maxPixels, true); // CMYK (alpha is already removed)
  const c = r.info.channels;
  if (c !== 1 && c !== 3) throw refuse(415, "invalid_image", msg("serving.image_undecodable"));
  const pixels = new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.length);
  const img: DecodedImage = { pixels, width: r.info.width, height: r.info.height, channels: c };
  // A grey file stays one channel, as Pillow opens it (mode L, LA, I;16) and as the pipelines' monitoring baseline
  // counts it (common/image_descriptors.py: the channels the file stores). sharp's raw output is sRGB, so a grey PNG
  // came back as three equal channels and img:channels drifted "high" on a model's own images. The three are kept
  // and one taken, rather than asking sharp for b-w, because its b-w cast of a 16-bit grey rounds otherwise than the
  // sRGB one the pipelines match (x >> 8); the tensor is the same either way (grey replicated, or L24 of three equal
  // channels, gives the same values). Baselines of models built before this fix counted a grey PNG as "1" already,
  // so they compare like with like from now on: nothing to skip for them.
  return r.grey && c === 3 ? (oneOfThree(img) ?? img) : img;
}

/** The first of three equal channels; undefined (keep all three) should any pixel's channels differ. */
function oneOfThree(img: DecodedImage): DecodedImage | undefined {
  const p = img.pixels;
  const out = new Uint8Array(img.width * img.height);
  for (let i = 0, at = 0; i < out.length; i++, at += 3) {
    if (p[at] !== p[at + 1] || p[at] !== p[at + 2]) return undefined;
    out[i] = p[at];
  }
  return { ...img, pixels: out, channels: 1 };
}

async function rawPixels(bytes: Buffer | Uint8Array, maxPixels: number, toSrgb: boolean) {
  try {
    // ignoreIcc unless converting CMYK: Pillow, which the pipelines train with, does not apply an embedded
    // profile either (a Display P3 photo's pixels would otherwise be converted here and not in training).
    let img = sharp(bytes, { limitInputPixels: maxPixels, ignoreIcc: !toSrgb }).removeAlpha();
    if (toSrgb) img = img.toColourspace("srgb");
    const grey = !toSrgb && (storedGreyFromHeader(bytes) ?? (await storedGrey(img)));
    return { ...(await img.raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true })), grey };
  } catch {
    // Which failure it was is read from the image's header, not from the words of sharp's message: over the pixel
    // limit (413, saying how many it has) or not decodable (415).
    const meta = await sharp(bytes, { limitInputPixels: false })
      .metadata()
      .catch(() => undefined);
    if (!meta?.width || !meta.height || meta.width * meta.height <= maxPixels)
      throw refuse(415, "invalid_image", msg("serving.image_undecodable"));
    throw refuse(
      413,
      "image_too_many_pixels",
      msg("serving.image_too_many_pixels", { size: `${meta.width}x${meta.height}`, max: maxPixels }),
    );
  }
}

/** Whether the file stores one colour channel (grey, with or without alpha), read from its header by sharp (formats other than PNG and JPEG). */
async function storedGrey(img: Sharp): Promise<boolean> {
  const meta = await img.metadata();
  return (meta.channels ?? 3) - (meta.hasAlpha ? 1 : 0) === 1;
}

export interface DecodeOptions {
  maxPixels: number;
  /** JPEGs by libjpeg-turbo on this thread (the caller has checked that it loads here: openTurboJpeg). */
  turbo: boolean;
  /** Where libjpeg-turbo writes (reused from one image to the next by a thread that resizes at once). */
  pixelMemory?: PixelMemory;
}

/**
 * Decoding in two steps, so that a thread can overlap it with its other work: the promise settles once sharp has
 * decoded (on libuv's threads, concurrently with what this thread runs meanwhile); the function it gives finishes
 * on this thread (a DICOM, or a JPEG by libjpeg-turbo, decoded synchronously, possibly into reused memory) and is
 * to be called where the pixels are used at once.
 */
export async function decodeForModel(bytes: Uint8Array, spec: ImageSpec, o: DecodeOptions): Promise<() => Promise<DecodedImage>> {
  if (isDicom(bytes))
    return async () => {
      const { image, header } = await decodeDicom(bytes, spec.dicom, o.maxPixels);
      return { ...image, dicom: { modality: header.modality, manufacturer: header.manufacturer, bodyPart: header.bodyPart } };
    };
  if (o.turbo && isJpeg(bytes))
    return async () => decodeJpegTurbo(bytes, o.maxPixels, o.pixelMemory) ?? (await decodeImage(bytes, o.maxPixels));
  const img = await decodeImage(bytes, o.maxPixels);
  return async () => img;
}

/** Buffers a thread reuses from one image to the next: the letterbox canvas and the tensor (the model's size is fixed). */
export class TensorMemory {
  tensor?: Float32Array<ArrayBuffer>;
  letterboxed?: Uint8Array;
}

/**
 * Decoded pixels -> the input tensor. With `memory` the tensor is that memory, valid until the next image on this
 * thread (for a thread that runs the model at once); without, fresh buffers (to move to another thread).
 */
export function toInputTensor(img: DecodedImage, spec: ImageSpec, memory?: TensorMemory): Preprocessed {
  const size = spec.channels * spec.height * spec.width;
  let tensor: Float32Array;
  let resized;
  if (memory) {
    memory.tensor ??= new Float32Array(size);
    memory.letterboxed ??= new Uint8Array(size);
    resized = resizeToSpec(img, spec, { into: memory.letterboxed });
    tensor = normalise(resized.pixels, spec, memory.tensor);
  } else {
    resized = resizeToSpec(img, spec);
    tensor = normalise(resized.pixels, spec);
  }
  return { tensor, origWidth: img.width, origHeight: img.height, scaleX: resized.scaleX, scaleY: resized.scaleY };
}

/**
 * The same steps on the calling thread with fresh buffers and sharp for every non-DICOM image: the plain reference
 * that the threads' paths (libjpeg-turbo, reused memory) are tested against, and the DICOM benchmark's loop.
 */
export async function preprocessInline(bytes: Buffer | Uint8Array, spec: ImageSpec, maxPixels: number): Promise<Preprocessed> {
  const decode = await decodeForModel(bytes, spec, { maxPixels, turbo: false });
  return toInputTensor(await decode(), spec);
}

/**
 * From the event loop (the batching placement, placement-batching.ts): the same steps on a preprocessing thread,
 * so no pixel work stalls HTTP. jpegDecoder "sharp" (JPEG_DECODER=sharp): never libjpeg-turbo. The bytes are moved
 * to the thread when they own their buffer (as Predictor.predictImage moves them): do not use them after.
 */
export async function preprocessImage(
  bytes: Buffer | Uint8Array,
  spec: ImageSpec,
  maxPixels: number,
  jpegDecoder: "auto" | "sharp" = "auto",
): Promise<Preprocessed> {
  const r = await preprocessPool().preprocess(bytes, spec, maxPixels, jpegDecoder);
  return { tensor: r.tensor, origWidth: r.width, origHeight: r.height, scaleX: r.scaleX, scaleY: r.scaleY, descriptors: r.descriptors };
}
