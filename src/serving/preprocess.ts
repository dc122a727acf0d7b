import sharp, { type Metadata } from "sharp";
import { refuse } from "../net/outbound-guard.js";
import type { ImageSpec } from "./manifest.js";
import { preprocessPool } from "./preprocess-pool.js";
import { normalise, resizeToSpec } from "./tensor.js";

export { letterboxGeometry, normalise, resizeToSpec, toChannels } from "./tensor.js";

/**
 * Image bytes -> the model's input tensor, exactly as manifest input.image states and as the pipelines
 * compute it with Pillow (builder_pipelines.vision.preprocess, detection.boxes.letterbox):
 * decode (sharp), drop alpha, greyscale by ITU-R 601-2 luminance (Pillow's L24 rounding) or RGB,
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

/** Decodes with a pixel cap read from the header before any pixel is decoded (decompression bombs). */
export async function decodeImage(bytes: Buffer, maxPixels: number): Promise<DecodedImage> {
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw refuse(415, "invalid_image", "the image cannot be decoded");
  }
  const w = meta.width ?? 0, h = meta.height ?? 0;
  if (w * h > maxPixels) throw refuse(413, "image_too_many_pixels", `the image has ${w}x${h} pixels; the limit is ${maxPixels} pixels`);
  try {
    let img = sharp(bytes, { limitInputPixels: maxPixels }).removeAlpha();
    if (meta.space === "cmyk") img = img.toColourspace("srgb");
    const { data, info } = await img.raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true });
    const c = info.channels;
    if (c === 1 || c === 3) return { pixels: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: c };
    throw new Error(`unexpected channel count ${c}`);
  } catch (err) {
    if ((err as Error).message?.includes("pixel limit")) throw refuse(413, "image_too_many_pixels", `the image is larger than ${maxPixels} pixels`);
    throw refuse(415, "invalid_image", "the image cannot be decoded");
  }
}

/** Images above this many pixels are resized on a worker thread: a 12 MP photo costs ~150 ms of CPU. */
const OFFLOAD_PIXELS = 1_000_000;

export async function preprocessImage(bytes: Buffer, spec: ImageSpec, maxPixels: number): Promise<Preprocessed> {
  const img = await decodeImage(bytes, maxPixels);
  if (img.width * img.height > OFFLOAD_PIXELS) {
    const r = await preprocessPool().run(img, spec);
    return { tensor: r.tensor, origWidth: img.width, origHeight: img.height, scaleX: r.scaleX, scaleY: r.scaleY };
  }
  const { pixels, scaleX, scaleY } = resizeToSpec(img, spec);
  return { tensor: normalise(pixels, spec), origWidth: img.width, origHeight: img.height, scaleX, scaleY };
}
