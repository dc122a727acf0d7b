// Grad-CAM maps arrive as filas x columnas values 0..255. They are painted with a perceptual colour ramp
// (dark blue -> red -> yellow, like "inferno"), and low values are transparent so the anatomy stays visible.

const STOPS: Array<[number, [number, number, number]]> = [
  [0, [0, 0, 4]],
  [0.25, [87, 16, 110]],
  [0.5, [188, 55, 84]],
  [0.75, [249, 142, 9]],
  [1, [252, 255, 164]],
];

export function rampColour(t: number): [number, number, number] {
  const x = Math.max(0, Math.min(1, t));
  for (let i = 1; i < STOPS.length; i++) {
    const [t1, c1] = STOPS[i];
    if (x <= t1) {
      const [t0, c0] = STOPS[i - 1];
      const f = (x - t0) / (t1 - t0);
      return [0, 1, 2].map((k) => Math.round(c0[k] + (c1[k] - c0[k]) * f)) as [number, number, number];
    }
  }
  return STOPS[STOPS.length - 1][1];
}

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
      out[o + 3] = Math.round(255 * Math.min(1, v * 1.4));
    }
  }
  return out;
}
