import sharp, { type Metadata } from "sharp";
import { refuse } from "../net/outbound-guard.js";
import type { ImageSpec } from "./manifest.js";
import { resizeLikePillow } from "./resample.js";

/**
 * Image bytes -> the model's input tensor, exactly as manifest input.image states and as the pipelines
 * compute it with Pillow (builder_pipelines.vision.preprocess, detection.boxes.letterbox):
 * decode (sharp), drop alpha, greyscale by ITU-R 601-2 luminance (Pillow's L24 rounding) or RGB,
 * resize (Pillow-exact, resample.ts) by stretch or letterbox (top-left, pad bottom/right with pad_value),
 * then float32 x * scale, (x - mean[c]) / std[c], NCHW.
 */

export interface DecodedImage {
  /** Interleaved uint8, alpha dropped; 1 (grey) or 3 (RGB) channels. */
  pixels: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3;
}

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

/** Pillow's convert("L") / convert("RGB") on 8-bit data. */
export function toChannels(img: DecodedImage, channels: 1 | 3): Uint8Array {
  const n = img.width * img.height;
  if (img.channels === channels) return img.pixels;
  if (channels === 3) {
    const out = new Uint8Array(n * 3);
    for (let i = 0; i < n; i++) out[i * 3] = out[i * 3 + 1] = out[i * 3 + 2] = img.pixels[i];
    return out;
  }
  const out = new Uint8Array(n);
  const p = img.pixels;
  // L24 in Pillow's Convert.c: (r*19595 + g*38470 + b*7471 + 0x8000) >> 16
  for (let i = 0; i < n; i++) out[i] = (p[i * 3] * 19595 + p[i * 3 + 1] * 38470 + p[i * 3 + 2] * 7471 + 0x8000) >>> 16;
  return out;
}

/** The letterbox geometry of detection/boxes.py: scale, resized width and height (JS Math.round). */
export function letterboxGeometry(w: number, h: number, inW: number, inH: number) {
  const scale = Math.min(inW / w, inH / h);
  return { scale, nw: Math.min(inW, Math.max(1, Math.round(w * scale))), nh: Math.min(inH, Math.max(1, Math.round(h * scale))) };
}

/** uint8 [H,W,C] resized/padded to the spec's size, still uint8 (the part Pillow computes). */
export function resizeToSpec(img: DecodedImage, spec: ImageSpec): { pixels: Uint8Array; scaleX: number; scaleY: number } {
  const c = spec.channels;
  const px = toChannels(img, c);
  if (spec.resize === "stretch") {
    return {
      pixels: resizeLikePillow(px, img.width, img.height, c, spec.width, spec.height, spec.interpolation),
      scaleX: spec.width / img.width,
      scaleY: spec.height / img.height,
    };
  }
  const { scale, nw, nh } = letterboxGeometry(img.width, img.height, spec.width, spec.height);
  const resized = resizeLikePillow(px, img.width, img.height, c, nw, nh, spec.interpolation);
  const out = new Uint8Array(spec.width * spec.height * c).fill(Math.round(spec.pad_value ?? 0));
  for (let y = 0; y < nh; y++) out.set(resized.subarray(y * nw * c, (y + 1) * nw * c), y * spec.width * c);
  return { pixels: out, scaleX: scale, scaleY: scale };
}

/** uint8 HWC -> float32 CHW with scale, mean and std, in float32 arithmetic like numpy. */
export function normalise(pixels: Uint8Array, spec: ImageSpec, out = new Float32Array(spec.channels * spec.width * spec.height)): Float32Array {
  const c = spec.channels, plane = spec.width * spec.height;
  const f = Math.fround;
  const scale = f(spec.scale);
  for (let b = 0; b < c; b++) {
    const mean = f(spec.mean[b]), std = f(spec.std[b]);
    for (let i = 0; i < plane; i++) out[b * plane + i] = f(f(f(pixels[i * c + b] * scale) - mean) / std);
  }
  return out;
}

export async function preprocessImage(bytes: Buffer, spec: ImageSpec, maxPixels: number): Promise<Preprocessed> {
  const img = await decodeImage(bytes, maxPixels);
  const { pixels, scaleX, scaleY } = resizeToSpec(img, spec);
  return { tensor: normalise(pixels, spec), origWidth: img.width, origHeight: img.height, scaleX, scaleY };
}
