// The colour ramp Grad-CAM maps are painted with, on the dashboard's Try-it overlay (web/src/lib/gradcam.ts) and in a
// batch's overlays.zip (src/batches/overlays.ts): one ramp, so a map looks the same in both. A perceptual ramp
// (dark blue -> red -> yellow, like "inferno"); low values are drawn transparent so the anatomy stays visible.

export const GRADCAM_STOPS: ReadonlyArray<readonly [number, readonly [number, number, number]]> = [
  [0, [0, 0, 4]],
  [0.25, [87, 16, 110]],
  [0.5, [188, 55, 84]],
  [0.75, [249, 142, 9]],
  [1, [252, 255, 164]],
];

export function rampColour(t: number): [number, number, number] {
  const x = Math.max(0, Math.min(1, t));
  for (let i = 1; i < GRADCAM_STOPS.length; i++) {
    const [t1, c1] = GRADCAM_STOPS[i];
    if (x <= t1) {
      const [t0, c0] = GRADCAM_STOPS[i - 1];
      const f = (x - t0) / (t1 - t0);
      return [0, 1, 2].map((k) => Math.round(c0[k] + (c1[k] - c0[k]) * f)) as [number, number, number];
    }
  }
  return [...GRADCAM_STOPS[GRADCAM_STOPS.length - 1][1]];
}

/** How opaque the map is drawn at value t (0..1): transparent at 0, fully opaque from about 0.7. */
export function rampAlpha(t: number): number {
  return Math.min(1, Math.max(0, t) * 1.4);
}
