import type { JsonBytes } from "./json-encode.js";
import type { DecodedImage, ImageDescriptors } from "./tensor.js";

export type { ImageDescriptors } from "./tensor.js";

/**
 * An image's simple descriptors for monitoring's drift (issue 49 item 1/4; docs/monitoring.md): its size, aspect and
 * channels, the mean and spread of its intensity, and for a DICOM its modality, manufacturer and body part. Computed
 * where the image is decoded (a model or preprocessing thread), from the pixels already there, and sent back beside
 * the answer; monitoring bins them and keeps only counts. The pipelines compute the same for the validation and
 * test images (pipelines/builder_pipelines/common/image_descriptors.py), so the two compare bin for bin.
 *
 * Intensity: per pixel the mean of its channels (0-255), over at most SAMPLE_PIXELS pixels taken at an even stride,
 * so a 12-megapixel photo costs what a small one does (a few tens of microseconds).
 */

/** Pixels sampled for the intensity figures (the pipelines use the same number and stride rule). */
export const SAMPLE_PIXELS = 8192;

export function describeImage(img: DecodedImage): ImageDescriptors {
  const { pixels, width, height, channels } = img;
  const n = width * height;
  const stride = Math.max(1, Math.floor(n / SAMPLE_PIXELS));
  let sum = 0;
  let sq = 0;
  let k = 0;
  for (let p = 0; p < n; p += stride) {
    const at = p * channels;
    const v = channels === 3 ? (pixels[at] + pixels[at + 1] + pixels[at + 2]) / 3 : pixels[at];
    sum += v;
    sq += v * v;
    k++;
  }
  const mean = k ? sum / k : 0;
  const d: ImageDescriptors = { width, height, channels, mean, std: k ? Math.sqrt(Math.max(0, sq / k - mean * mean)) : 0 };
  if (img.dicom) {
    d.modality = img.dicom.modality;
    d.manufacturer = img.dicom.manufacturer;
    d.bodyPart = img.dicom.bodyPart;
  }
  return d;
}

const noted = new WeakMap<object, ImageDescriptors>();

/** Records an answer's descriptors (the placements, as they note the input check's finding). */
export function noteDescriptors(body: JsonBytes, d: ImageDescriptors | undefined): void {
  if (d) noted.set(body, d);
}

export function descriptorsOf(body: object): ImageDescriptors | undefined {
  return noted.get(body);
}
