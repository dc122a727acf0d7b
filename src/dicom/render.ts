import type { DicomRendering, DicomWindow } from "../contract/types.js";
import type { DecodedImage } from "../serving/tensor.js";
import type { ParsedDicom } from "./parse.js";
import { decimal } from "./parse.js";
import type { GreyFrame } from "./pixels.js";

/**
 * A grey frame's stored values -> 8-bit grey levels, exactly as pipelines/contract/manifest.schema.json
 * (input.image.dicom) states and the pipelines compute it: modality LUT (RescaleSlope/Intercept), a linear VOI
 * window (c, w): y = ((m - (c - 0.5)) / (w - 1) + 0.5) * 255 clipped to [0, 255] (w = 1: a step at c - 0.5); without
 * one, unsigned grey of at most 8 bits stored as it is (y = m clipped, unwindowed_8bit "as_stored": the same pixels
 * as a PNG score the same) and anything deeper from the frame's own min..max; grey = floor(y + 0.5), and
 * MONOCHROME1 inverted.
 */

/** What a model with no dicom record gets: the file's own window, MONOCHROME1 shown as radiologists see it. */
export const DEFAULT_RENDERING: DicomRendering = {
  modality_lut: true,
  window: { source: "file" },
  invert_monochrome1: true,
  frames: "first",
  unwindowed_8bit: "as_stored",
};

export interface Window {
  center: number;
  width: number;
}

/** The window a rendering picks for this file; undefined: min..max of the frame. */
export function chooseWindow(d: ParsedDicom, w: DicomWindow): Window | undefined {
  if (w.source !== "file") {
    if (w.center === undefined || w.width === undefined) return undefined;
    return { center: w.center, width: w.width };
  }
  // The file's first WindowCenter/WindowWidth; a width under 1 is not a window (PS3.3 C.11.2.1.2.1).
  const center = decimal(d.dataSet, "x00281050");
  const width = decimal(d.dataSet, "x00281051");
  return center !== undefined && width !== undefined && width >= 1 ? { center, width } : undefined;
}

export function renderGrey(d: ParsedDicom, frame: GreyFrame, rendering: DicomRendering): DecodedImage {
  const { values, width, height } = frame;
  const n = width * height;
  const slope = rendering.modality_lut ? (decimal(d.dataSet, "x00281053") ?? 1) : 1;
  const intercept = rendering.modality_lut ? (decimal(d.dataSet, "x00281052") ?? 0) : 0;
  const window = chooseWindow(d, rendering.window);
  const grey = new Uint8Array(n);
  // Absent in records written before the rule: those models were trained on min..max, and are served so.
  const asStored = rendering.unwindowed_8bit === "as_stored" && d.pixel.bitsStored <= 8 && !d.pixel.signed;
  if (!window && asStored) {
    for (let i = 0; i < n; i++) {
      const m = values[i] * slope + intercept;
      grey[i] = m <= 0 ? 0 : m >= 255 ? 255 : Math.floor(m + 0.5);
    }
  } else if (window) {
    const { center: c, width: w } = window;
    if (w === 1) {
      for (let i = 0; i < n; i++) grey[i] = values[i] * slope + intercept <= c - 0.5 ? 0 : 255;
    } else {
      const lo = c - 0.5;
      const span = w - 1;
      for (let i = 0; i < n; i++) {
        const y = ((values[i] * slope + intercept - lo) / span + 0.5) * 255;
        grey[i] = y <= 0 ? 0 : y >= 255 ? 255 : Math.floor(y + 0.5);
      }
    }
  } else {
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      const m = values[i] * slope + intercept;
      if (m < min) min = m;
      if (m > max) max = m;
    }
    if (max > min) {
      const range = max - min;
      for (let i = 0; i < n; i++) grey[i] = Math.floor(((values[i] * slope + intercept - min) / range) * 255 + 0.5);
    }
  }
  if (rendering.invert_monochrome1 && d.pixel.photometric === "MONOCHROME1") for (let i = 0; i < n; i++) grey[i] = 255 - grey[i];
  return { pixels: grey, width, height, channels: 1 };
}
