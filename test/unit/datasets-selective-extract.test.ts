import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { prepareDataset } from "../../src/datasets/prepare.js";
import type { DatasetTask } from "../../src/datasets/types.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";
import { makeZip, visionDataset } from "../helpers/zips.js";

// Issue 16/19: a zip of 100,000 tiny files for a `data` task took 21 s to validate although only the CSV matters.
// Every entry is still checked from the central directory; only what the task reads is written to disk.
// (Speed figures: bench/ingest/many-entries.ts.)

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "selective-"));
const files = (dir: string) =>
  (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .sort();

async function prepare(zip: Buffer, task: DatasetTask, env: Record<string, string> = {}) {
  const bucket = new LocalBucket(tmp());
  await bucket.write("u/e/d.zip", Readable.from([zip]));
  const workDir = tmp();
  const out = await prepareDataset(
    { bucket, config: parseConfig({ BUILDER_DATA_DIR: os.tmpdir(), ...env }) },
    { zipPath: "u/e/d.zip", workDir, task, seed: 7, split: "train_val_test" },
  );
  return { out, extracted: fs.existsSync(path.join(workDir, "dataset")) ? files(path.join(workDir, "dataset")) : [] };
}

const csv =
  ["id,label,f1,f2", ...Array.from({ length: 60 }, (_, i) => `${i},${i % 2 ? "M" : "B"},${(i * 7) % 13},${(i * 3) % 11}`)].join("\n") +
  "\n";
const data: DatasetTask = {
  family: "classification",
  inputs: "table",
  label_cols: ["label"],
  images_col: null,
  data_cols: ["f1", "f2"],
  split_col: null,
};
const noise = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`notes/n${i}.txt`, "x"]));

describe("selective extraction", () => {
  it("a data task writes only the CSV, whatever else the zip holds", async () => {
    const { out, extracted } = await prepare(makeZip({ "data.csv": csv, ...noise }), data);
    expect(out.report.errors).toEqual([]);
    expect(out.report.valid).toBe(true);
    expect(extracted).toEqual(["data.csv"]);
  });

  it("an unsafe entry the task would never read is still refused (checked from the central directory)", async () => {
    const { out, extracted } = await prepare(makeZip({ "data.csv": csv, ...noise, "../../evil.txt": "owned" }), data);
    expect(out.report.valid).toBe(false);
    expect(out.report.errors.map((e) => e.code)).toEqual(["zip_unsafe_path"]);
    expect(extracted).toEqual([]);
  });

  it("a vision task writes the CSV and the images it names, not the unreferenced ones", async () => {
    const entries = await visionDataset({ top: "study/" });
    const zip = makeZip({ ...entries, "study/extra/unused_1.png": entries["study/images/p0_0.png"], "study/notes.txt": "x" });
    const { out, extracted } = await prepare(zip, {
      family: "classification",
      inputs: "images",
      label_cols: ["label"],
      images_col: "image",
      data_cols: [],
      split_col: null,
    });
    expect(out.report.valid).toBe(true);
    expect(out.report.summary.unreferenced_images).toBe(1);
    const named = Object.keys(entries).filter((n) => n.endsWith(".png"));
    expect(extracted).toEqual([...named, Object.keys(entries).find((n) => n.endsWith(".csv"))!].sort());
  });

  it("stops a check that runs past VALIDATION_TIMEOUT_S with validation_timeout, leaving nothing extracted", async () => {
    const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`notes/n${i}.txt`, "x"]));
    const { out, extracted } = await prepare(makeZip({ "data.csv": csv, ...many }), data, { VALIDATION_TIMEOUT_S: "0.001" });
    expect(out.report.valid).toBe(false);
    expect(out.report.errors.map((e) => e.code)).toEqual(["validation_timeout"]);
    expect(out.report.errors[0].message).toMatch(/VALIDATION_TIMEOUT_S/);
    expect(extracted).toEqual([]);
    // The same zip with the default limit is valid: the timeout, not the data, stopped it.
    expect((await prepare(makeZip({ "data.csv": csv, ...many }), data)).out.report.valid).toBe(true);
  });
});
