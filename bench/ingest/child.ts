// One measured run in a fresh process, so its peak memory (maxRSS) is its own:
//   node --import tsx bench/ingest/child.ts extract|admzip|prepare ZIP WORKDIR
// Prints one JSON line: {mode, seconds, max_rss_mb, ...}.
import fs from "node:fs";
import path from "node:path";
import { parseConfig } from "../../src/config.js";
import { extractZip } from "../../src/datasets/extract.js";
import { prepareDataset } from "../../src/datasets/prepare.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";

const [mode, zipFile, workDir] = process.argv.slice(2);
const config = parseConfig({ BUILDER_DATA_DIR: workDir });
const limits = {
  maxEntries: config.ZIP_MAX_ENTRIES,
  maxUncompressedBytes: config.ZIP_MAX_UNCOMPRESSED_BYTES,
  maxCompressionRatio: config.ZIP_MAX_COMPRESSION_RATIO,
};
const t0 = process.hrtime.bigint();
let extra: Record<string, unknown> = {};
if (mode === "admzip") {
  // adm-zip is not a Builder dependency; it is measured here only because it is in node_modules
  // (pulled in by onnxruntime-node), to compare its memory with the streaming reader Builder uses.
  const { default: AdmZip } = await import("adm-zip" as string);
  const zip = new AdmZip(zipFile);
  zip.extractAllTo(path.join(workDir, "admzip"), true);
  extra = { files: zip.getEntries().length };
} else if (mode === "extract") {
  const r = await extractZip(zipFile, path.join(workDir, "extract-only"), limits);
  extra = { files: r.files.length, bytes: r.totalBytes };
} else {
  // The zip is linked into a local bucket (no copy), as an upload would have put it there.
  const bucketDir = path.join(workDir, "bucket");
  fs.mkdirSync(path.join(bucketDir, "u", "bench"), { recursive: true });
  fs.linkSync(zipFile, path.join(bucketDir, "u", "bench", "d.zip"));
  const out = await prepareDataset(
    { bucket: new LocalBucket(bucketDir), config },
    {
      zipPath: "u/bench/d.zip",
      workDir: path.join(workDir, "prepare"),
      task: { family: "classification", inputs: "images", label_cols: ["label"], images_col: "image", data_cols: [], split_col: null },
      seed: 0,
      split: "train_val_test",
    },
  );
  extra = {
    valid: out.report.valid,
    errors: out.report.errors.length,
    rows: out.report.summary.rows,
    patients: out.report.summary.patients,
    split: out.report.summary.split,
  };
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(
  JSON.stringify({
    mode,
    seconds: Math.round(seconds * 100) / 100,
    max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    ...extra,
  }),
);
