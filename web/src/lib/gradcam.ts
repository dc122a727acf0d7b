// Grad-CAM maps arrive as filas x columnas values 0..255. They are painted with a perceptual colour ramp
// (dark blue -> red -> yellow, like "inferno"), and low values are transparent so the anatomy stays visible.

import { GRADCAM_STOPS as STOPS, rampAlpha, rampColour } from "../../../src/serving/gradcam-ramp";

// One ramp for the dashboard and a batch's overlays.zip (src/serving/gradcam-ramp.ts).
export { rampColour };

/** The ramp as a CSS linear-gradient, for the overlay's legend (transparent low values are shown in full colour). */
export function rampGradient(): string {
  return `linear-gradient(to right, ${STOPS.map(([t, [r, g, b]]) => `rgb(${r} ${g} ${b}) ${t * 100}%`).join(", ")})`;
}

/** RGBA pixels for a map: colour from the ramp, alpha rising with the value. */
export function gradcamPixels(map: number[][]): Uint8ClampedArray {
  const h = map.length,
    w = map[0]?.length ?? 0;
  const out = new Uint8ClampedArray(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = map[y][x] / 255;
      const [r, g, b] = rampColour(v);
      const o = (y * w + x) * 4;
      out[o] = r;
      out[o + 1] = g;
      out[o + 2] = b;
      out[o + 3] = Math.round(255 * rampAlpha(v));
    }
  }
  return out;
}
