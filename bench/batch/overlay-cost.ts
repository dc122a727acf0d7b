/**
 * What one Grad-CAM overlay of a batch costs on the event loop and sharp's threads, apart from the model: reading the
 * map out of /predict's JSON answer (JSON.parse of a 512x384 map) and drawing the PNG (decode and resize the image,
 * blend the map, encode), for a 512x384 JPEG and map (GRADCAM_MAX_SIDE 512). Two images: a smooth one (as most scans
 * are) and noise (the worst case for PNG).
 *
 *   npx tsx bench/batch/overlay-cost.ts [--n 30]
 */
import sharp from "sharp";
import { overlayPng } from "../../src/batches/overlays.js";

const i = process.argv.indexOf("--n");
const N = i > 0 ? Number(process.argv[i + 1]) : 30;
const w = 512,
  h = 384;
const map = Array.from({ length: h }, (_, y) =>
  Array.from({ length: w }, (_, x) => Math.round(255 * Math.exp(-((x - 330) ** 2 + (y - 150) ** 2) / 3000))),
);
const json = JSON.stringify({ prediccion: [0, 1], score: [0.2, 0.8], columnas: w, filas: h, gradients: { "1": map } });

const smooth = Buffer.alloc(w * h * 3);
const noise = Buffer.alloc(w * h * 3);
for (let p = 0; p < w * h; p++) {
  const x = p % w,
    y = Math.floor(p / w);
  const v = Math.round(60 + 120 * Math.exp(-((x - 256) ** 2 / 30000 + (y - 192) ** 2 / 15000)) + 20 * Math.sin(x / 9));
  smooth.fill(v, p * 3, p * 3 + 3);
  for (let k = 0; k < 3; k++) noise[p * 3 + k] = ((p * 3 + k) * 7919) % 251;
}
const jpeg = (raw: Buffer) =>
  sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();

const time = async (f: () => unknown) => {
  for (let k = 0; k < 3; k++) await f();
  const t0 = performance.now();
  for (let k = 0; k < N; k++) await f();
  return (performance.now() - t0) / N;
};
console.log(`${new Date().toISOString()} · ${w}x${h}, ${N} runs each, one at a time`);
console.log(`JSON.parse of the answer with its map: ${(await time(() => JSON.parse(json))).toFixed(1)} ms`);
for (const [name, raw] of [
  ["smooth", smooth],
  ["noise", noise],
] as const) {
  const img = await jpeg(raw);
  const png = await overlayPng(img, { columnas: w, filas: h }, map, 1e8);
  const ms = await time(() => overlayPng(img, { columnas: w, filas: h }, map, 1e8));
  console.log(`overlay PNG, ${name} image: ${ms.toFixed(1)} ms, ${Math.round(png.length / 1024)} KB`);
}
