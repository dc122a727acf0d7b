import type { ImageSpec } from "./manifest.js";
import { resizeLikePillow } from "./resample.js";
import { normaliseWasm } from "./pixels-wasm.js";

/**
 * The pixel arithmetic of preprocessing (no decoding, no I/O), reached through preprocess.ts's toInputTensor on
 * the model threads and the preprocessing threads: channel conversion, the resize after Pillow (stretch or
 * letterbox; resample.ts), normalisation (the per-pixel loops in WebAssembly, pixels-wasm.ts).
 */

export interface DecodedImage {
  /** Interleaved uint8, alpha dropped; 1 (grey) or 3 (RGB) channels. */
  pixels: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3;
  /** A DICOM's acquisition categories (monitoring's descriptors, image-descriptors.ts); absent for other files. */
  dicom?: { modality: string | null; manufacturer: string | null; bodyPart: string | null };
}

/** An image's descriptors for monitoring (computed in image-descriptors.ts). */
export interface ImageDescriptors {
  width: number;
  height: number;
  channels: number;
  mean: number;
  std: number;
  modality?: string | null;
  manufacturer?: string | null;
  bodyPart?: string | null;
  /**
   * The model's feature summary for this image (input-check.ts featureProjection): its penultimate-layer features on
   * the check's first principal directions, standardised. Binned by the recorder (monitoring's feature drift), then
   * forgotten; absent for a model built before the projections were served.
   */
  features?: Float32Array;
}

/** An image as its model's input tensor, with what the answer needs to map back to the image's own pixels. */
export interface Preprocessed {
  tensor: Float32Array; // C*H*W
  origWidth: number;
  origHeight: number;
  /** Input-tensor pixels per original pixel, per axis (letterbox: both the same). */
  scaleX: number;
  scaleY: number;
  /** Monitoring's descriptors of the decoded image, where a preprocessing thread made them (image-descriptors.ts). */
  descriptors?: ImageDescriptors;
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

/**
 * uint8 [H,W,C] resized/padded to the spec's size, still uint8 (the part Pillow computes).
 * scratch (a thread's request path, which normalises at once): the pixels may be a view of memory the next call
 * overwrites, and `into` (spec-sized) receives a letterboxed result; nothing per call is allocated then.
 */
export function resizeToSpec(
  img: DecodedImage,
  spec: ImageSpec,
  scratch?: { into: Uint8Array },
): { pixels: Uint8Array; scaleX: number; scaleY: number } {
  const c = spec.channels;
  const px = toChannels(img, c);
  if (spec.resize === "stretch") {
    return {
      pixels: resizeLikePillow(px, img.width, img.height, c, spec.width, spec.height, spec.interpolation, !!scratch),
      scaleX: spec.width / img.width,
      scaleY: spec.height / img.height,
    };
  }
  const { scale, nw, nh } = letterboxGeometry(img.width, img.height, spec.width, spec.height);
  const resized = resizeLikePillow(px, img.width, img.height, c, nw, nh, spec.interpolation, !!scratch);
  const out = (scratch?.into ?? new Uint8Array(spec.width * spec.height * c)).fill(Math.round(spec.pad_value ?? 0));
  for (let y = 0; y < nh; y++) out.set(resized.subarray(y * nw * c, (y + 1) * nw * c), y * spec.width * c);
  return { pixels: out, scaleX: scale, scaleY: scale };
}

/**
 * uint8 HWC -> float32 CHW with scale, mean and std, in float32 arithmetic like numpy. A pixel value has 256
 * possible results per channel, so they are computed once into a table here and looked up in WebAssembly
 * (normaliseWasm).
 */
export function normalise(
  pixels: Uint8Array,
  spec: ImageSpec,
  out = new Float32Array(spec.channels * spec.width * spec.height),
): Float32Array {
  const c = spec.channels,
    plane = spec.width * spec.height;
  const f = Math.fround;
  const scale = f(spec.scale);
  const lut = new Float32Array(256 * c);
  for (let b = 0; b < c; b++) {
    const mean = f(spec.mean[b]),
      std = f(spec.std[b]);
    for (let v = 0; v < 256; v++) lut[b * 256 + v] = f(f(f(v * scale) - mean) / std);
  }
  return normaliseWasm(pixels, c, plane, lut, out);
}
