import sharp from "sharp";
import { decodeDicom, isDicom } from "../dicom/index.js";
import { refuse } from "../net/outbound-guard.js";
import type { ImageSpec } from "./manifest.js";
import { isJpeg } from "./jpeg-turbo.js";
import { preprocessPool } from "./preprocess-pool.js";
import { normalise, resizeToSpec } from "./tensor.js";

export { letterboxGeometry, normalise, resizeToSpec, toChannels } from "./tensor.js";

/**
 * Image bytes -> the model's input tensor, exactly as manifest input.image states and as the pipelines
 * compute it with Pillow (builder_pipelines.vision.preprocess, detection.boxes.letterbox):
 * decode (libjpeg-turbo for JPEGs on the serving threads, see jpeg-turbo.ts; sharp), drop alpha, greyscale by
 * ITU-R 601-2 luminance (Pillow's L24 rounding) or RGB,
 * resize (Pillow-exact, resample.ts) by stretch or letterbox (top-left, pad bottom/right with pad_value),
 * then float32 x * scale, (x - mean[c]) / std[c], NCHW.
 */

import type { DecodedImage } from "./tensor.js";
export type { DecodedImage } from "./tensor.js";

export interface Preprocessed {
  tensor: Float32Array; // C*H*W
  origWidth: number;
  origHeight: number;
  /** Input-tensor pixels per original pixel, per axis (letterbox: both the same). */
  scaleX: number;
  scaleY: number;
}

/**
 * Decodes in one pass (no separate header read): sharp refuses more than maxPixels before decoding any pixel
 * (decompression bombs). Only the rare cases pay a second look: a CMYK image is decoded again converted to sRGB,
 * and an image sharp refuses has its header read to tell why (over the limit, with its size, or undecodable).
 */
export async function decodeImage(bytes: Buffer | Uint8Array, maxPixels: number): Promise<DecodedImage> {
  let r = await rawPixels(bytes, maxPixels, false);
  if (r.info.channels === 4) r = await rawPixels(bytes, maxPixels, true); // CMYK (alpha is already removed)
  const c = r.info.channels;
  if (c !== 1 && c !== 3) throw refuse(415, "invalid_image", "the image cannot be decoded");
  return {
    pixels: new Uint8Array(r.data.buffer, r.data.byteOffset, r.data.length),
    width: r.info.width,
    height: r.info.height,
    channels: c,
  };
}

async function rawPixels(bytes: Buffer | Uint8Array, maxPixels: number, toSrgb: boolean) {
  try {
    // ignoreIcc unless converting CMYK: Pillow, which the pipelines train with, does not apply an embedded
    // profile either (a Display P3 photo's pixels would otherwise be converted here and not in training).
    let img = sharp(bytes, { limitInputPixels: maxPixels, ignoreIcc: !toSrgb }).removeAlpha();
    if (toSrgb) img = img.toColourspace("srgb");
    return await img.raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true });
  } catch {
    // Which failure it was is read from the image's header, not from the words of sharp's message: over the pixel
    // limit (413, saying how many it has) or not decodable (415).
    const meta = await sharp(bytes, { limitInputPixels: false })
      .metadata()
      .catch(() => undefined);
    if (!meta?.width || !meta.height || meta.width * meta.height <= maxPixels)
      throw refuse(415, "invalid_image", "the image cannot be decoded");
    throw refuse(413, "image_too_many_pixels", `the image has ${meta.width}x${meta.height} pixels; the limit is ${maxPixels} pixels`);
  }
}

/**
 * Any image /predict takes: a DICOM is decoded and rendered as the manifest's input.image.dicom says (src/dicom;
 * the file's own window when the model has no dicom record), everything else by sharp.
 */
export async function decodeAnyImage(bytes: Buffer | Uint8Array, spec: ImageSpec, maxPixels: number): Promise<DecodedImage> {
  if (isDicom(bytes)) return (await decodeDicom(bytes, spec.dicom, maxPixels)).image;
  return decodeImage(bytes, maxPixels);
}

/** Decode, resize and normalise on the calling thread, allocating fresh buffers: the plain reference that the
 * inference worker's buffer-reusing path (inference-worker.ts) is tested against (serving-image-worker.test.ts). */
export async function preprocessInline(bytes: Buffer | Uint8Array, spec: ImageSpec, maxPixels: number): Promise<Preprocessed> {
  const img = await decodeAnyImage(bytes, spec, maxPixels);
  const { pixels, scaleX, scaleY } = resizeToSpec(img, spec);
  return { tensor: normalise(pixels, spec), origWidth: img.width, origHeight: img.height, scaleX, scaleY };
}

/**
 * The same from the event loop (the batched path, predictor.ts): a JPEG is decoded, resized and normalised on a
 * preprocessing worker thread (libjpeg-turbo, see jpeg-turbo.ts; jpegDecoder "sharp" = JPEG_DECODER=sharp);
 * anything else, or a JPEG it declines, is decoded inside sharp's own threads and then resized and normalised
 * there.
 */
export async function preprocessImage(
  bytes: Buffer | Uint8Array,
  spec: ImageSpec,
  maxPixels: number,
  jpegDecoder: "auto" | "sharp" = "auto",
): Promise<Preprocessed> {
  if (isDicom(bytes)) {
    // Parsed, decoded (WASM codecs) and rendered on a preprocessing thread, like a JPEG: never on the event loop.
    const r = (await preprocessPool().runDicom(bytes, spec, maxPixels))!;
    return { tensor: r.tensor, origWidth: r.width!, origHeight: r.height!, scaleX: r.scaleX, scaleY: r.scaleY };
  }
  if (jpegDecoder === "auto" && isJpeg(bytes)) {
    const r = await preprocessPool().runJpeg(bytes, spec, maxPixels);
    if (r) return { tensor: r.tensor, origWidth: r.width!, origHeight: r.height!, scaleX: r.scaleX, scaleY: r.scaleY };
  }
  const img = await decodeImage(bytes, maxPixels);
  const r = await preprocessPool().run(img, spec);
  return { tensor: r.tensor, origWidth: img.width, origHeight: img.height, scaleX: r.scaleX, scaleY: r.scaleY };
}
