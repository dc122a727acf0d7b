/**
 * DICOM decode time at /predict's preprocessing (issue 41): parse + decode + render (src/dicom) + Pillow-exact resize
 * + normalise, per image, against the same pixels sent as a PNG (sharp decode + the same resize + normalise), in one
 * run on one machine. Both go through preprocessInline (the calling thread, no pool hand-off), so the figures are
 * the work itself; on the server it runs on the model's worker thread or the preprocessing pool, off the event loop.
 *
 *   npx tsx bench/serve/dicom-decode.ts [--out bench/serve/results-<date>-dicom-decode.txt]
 *
 * Images: a synthetic grey 12-bit image (make_dicoms.synthetic_grey, rescale -1024, window 1000/2500) at 512x512 (a
 * CT slice) and 2048x2048 (a radiograph), written in each lossless transfer syntax by test/helpers/make_dicoms.py;
 * the PNG is serving's own rendering of it (8-bit grey), so both paths feed the resize the same pixels.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { decodeDicom } from "../../src/dicom/index.js";
import type { ImageSpec } from "../../src/serving/manifest.js";
import { preprocessInline } from "../../src/serving/preprocess.js";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const SIZES = [512, 2048];
const SYNTAXES: Record<string, string> = {
  "Explicit VR Little Endian": "1.2.840.10008.1.2.1",
  "Deflated Explicit VR LE": "1.2.840.10008.1.2.1.99",
  "RLE Lossless": "1.2.840.10008.1.2.5",
  "JPEG-LS Lossless": "1.2.840.10008.1.2.4.80",
  "JPEG 2000 Lossless": "1.2.840.10008.1.2.4.90",
};
const SPEC = {
  width: 224,
  height: 224,
  channels: 1,
  resize: "stretch",
  interpolation: "bilinear",
  scale: 1 / 255,
  mean: [0.5],
  std: [0.25],
} as unknown as ImageSpec;

function writeDicoms(dir: string) {
  const py = `
import sys
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, "test/helpers"))})
from make_dicoms import Pixels, grey_values, synthetic_grey, write_dicom
for side in ${JSON.stringify(SIZES)}:
    g = synthetic_grey(side, side, seed=1)
    for name, uid in ${JSON.stringify(Object.entries(SYNTAXES))}:
        px = Pixels(grey_values(g, 12, False)[None], bits_stored=12, slope=1, intercept=-1024, window=[(1000, 2500)])
        write_dicom(f"${dir}/{side}_{uid}.dcm", px, uid)
`;
  execFileSync(path.join(ROOT, "pipelines/.venv/bin/python"), ["-c", py], { stdio: ["ignore", "ignore", "inherit"] });
}

async function median(fn: () => Promise<unknown>, runs: number): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm: WASM instantiation, JIT
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)];
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-dicom-"));
writeDicoms(dir);
const lines = [
  `# DICOM vs PNG at /predict's preprocessing, median ms per image (224x224x1 model input), ${new Date().toISOString()}`,
  `# ${os.cpus()[0].model}, ${os.availableParallelism()} cores, node ${process.version}; host load affects both columns alike`,
  "side   transfer syntax              file KB   DICOM ms   PNG KB   PNG ms   DICOM/PNG",
];
for (const side of SIZES) {
  const runs = side > 1000 ? 15 : 41;
  for (const [name, uid] of Object.entries(SYNTAXES)) {
    const dcm = fs.readFileSync(path.join(dir, `${side}_${uid}.dcm`));
    const { image } = await decodeDicom(dcm, undefined);
    const png = await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: image.channels } })
      .png()
      .toBuffer();
    const dMs = await median(() => preprocessInline(dcm, SPEC, 1e9), runs);
    const pMs = await median(() => preprocessInline(png, SPEC, 1e9), runs);
    lines.push(
      `${String(side).padEnd(6)} ${name.padEnd(28)} ${String(Math.round(dcm.length / 1024)).padStart(7)} ${dMs.toFixed(2).padStart(10)} ${String(Math.round(png.length / 1024)).padStart(8)} ${pMs.toFixed(2).padStart(8)} ${(dMs / pMs).toFixed(2).padStart(11)}`,
    );
    console.log(lines.at(-1));
  }
}
fs.rmSync(dir, { recursive: true, force: true });
const outIdx = process.argv.indexOf("--out");
if (outIdx > 0) fs.writeFileSync(process.argv[outIdx + 1], lines.join("\n") + "\n");
console.log(lines.slice(0, 3).join("\n"));
