// What writing an answer back costs on the API process (src/pacs): the structured report, and the secondary capture
// (decode the DICOM again on a preprocessing thread, enlarge, paint the map, burn the caption, encode), per source
// size, with the longest the event loop was held meanwhile. Run:
//   node --import tsx bench/pacs/write-cost.ts [--repeat 20]
// Sizes: a BreastMNIST image (28x28, 8-bit), and 512x512 and 2048x2048 12-bit MONOCHROME2 slices, uncompressed.
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { dataSet, el, newUid, writePart10 } from "../../src/dicom/write.js";
import { readSource } from "../../src/pacs/source.js";
import { preprocessPool } from "../../src/serving/preprocess-pool.js";
import { secondaryCapture } from "../../src/pacs/secondary-capture.js";
import { structuredReport, type AnswerFacts } from "../../src/pacs/structured-report.js";
import type { ServedManifest } from "../../src/serving/manifest.js";

const repeat = Number(process.argv[process.argv.indexOf("--repeat") + 1] || 20);

function slice(side: number, bits: 8 | 12): Buffer {
  const n = side * side;
  const px =
    bits === 8
      ? Uint8Array.from({ length: n }, (_, i) => (i * 7) % 256)
      : new Uint8Array(new Uint16Array(Array.from({ length: n }, (_, i) => (i * 13) % 4096)).buffer);
  return writePart10(
    dataSet({
      "00080016": el.str("UI", "1.2.840.10008.5.1.4.1.1.7"),
      "00080018": el.str("UI", newUid()),
      "00100010": el.str("PN", "Bench^Patient"),
      "00100020": el.str("LO", "B-1"),
      "0020000D": el.str("UI", newUid()),
      "0020000E": el.str("UI", newUid()),
      "00280002": { vr: "US", value: 1 },
      "00280004": el.str("CS", "MONOCHROME2"),
      "00280010": { vr: "US", value: side },
      "00280011": { vr: "US", value: side },
      "00280100": { vr: "US", value: bits === 8 ? 8 : 16 },
      "00280101": { vr: "US", value: bits },
      "00280102": { vr: "US", value: bits - 1 },
      "00280103": { vr: "US", value: 0 },
      "7FE00010": bits === 8 ? { vr: "OB", value: px } : { vr: "OW", value: px },
    }),
    "utf8",
  );
}

const facts: AnswerFacts = {
  modelName: "bench",
  modelVersion: 1,
  experimentId: 1,
  classes: ["benign", "malignant"],
  scores: [0.3, 0.7],
  decided: ["malignant"],
  thresholds: [0.5, 0.5],
  positiveClass: "malignant",
  sensitivity: 0.9,
  specificity: 0.8,
  caption: "NOT FOR DIAGNOSIS - research use only",
};
const manifest = { input: { name: "image", image: {} } } as unknown as ServedManifest;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const [side, bits] of [
  [28, 8],
  [512, 12],
  [2048, 12],
] as const) {
  const bytes = slice(side, bits);
  const map = Array.from({ length: Math.min(side, 512) }, (_, y) => Array.from({ length: Math.min(side, 512) }, (_, x) => (x + y) % 256));
  const src = readSource(bytes);
  const sr: number[] = [];
  const sc: number[] = [];
  let scBytes = 0;
  // How long the event loop was held at most while the captures were made (the decode runs on a preprocessing thread).
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  for (let i = 0; i < repeat; i++) {
    let t = performance.now();
    structuredReport(src, facts);
    sr.push(performance.now() - t);
    t = performance.now();
    scBytes = (await secondaryCapture(src, bytes, { score: [0.3, 0.7], gradients: { "1": map } }, facts, manifest, { maxPixels: 5e7 }))
      .bytes.length;
    sc.push(performance.now() - t);
  }
  loop.disable();
  console.log(
    `${side}x${side} ${bits}-bit: SR median ${median(sr).toFixed(2)} ms, SC median ${median(sc).toFixed(1)} ms (max ${Math.max(...sc).toFixed(1)}), ` +
      `event loop held at most ${(loop.max / 1e6).toFixed(0)} ms (p50 ${(loop.percentile(50) / 1e6).toFixed(0)} ms), SC file ${(scBytes / 1e6).toFixed(2)} MB, ${repeat} rounds`,
  );
}
await preprocessPool().close();
