import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { prepareDataset, type DatasetTask } from "../../src/datasets/prepare.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";
import { readNpz } from "../helpers/npz.js";
import { ZipWriter } from "../helpers/zips.js";

// Real public datasets from ../shared/datasets, converted to Builder's zip layouts on the fly
// (never copied into the repository). Skipped when the folder is absent (a fresh clone has none).

const shared = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../shared/datasets");
const has = (p: string) => fs.existsSync(path.join(shared, p));
const config = parseConfig({ BUILDER_DATA_DIR: os.tmpdir() });
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "real-"));

async function prepare(zipFile: string, request: DatasetTask) {
  const bucket = new LocalBucket(tmp());
  await bucket.write("u/real/d.zip", fs.createReadStream(zipFile));
  return prepareDataset({ bucket, config }, { zipPath: "u/real/d.zip", workDir: tmp(), task: request, seed: 42, split: "train_val_test" });
}

describe.skipIf(!has("wdbc/data.csv"))("WDBC (data task, real CSV)", () => {
  it("is valid: 569 patients, 30 numeric features, M/B classes, a stratified split", async () => {
    const zipFile = path.join(tmp(), "wdbc.zip");
    new ZipWriter(zipFile).add("wdbc/data.csv", fs.readFileSync(path.join(shared, "wdbc/data.csv"))).finish();
    const header = fs.readFileSync(path.join(shared, "wdbc/data.csv"), "utf8").split(/\r?\n/)[0].split(",");
    const dataCols = header.slice(2).filter((c) => c.trim() !== "");
    const out = await prepare(zipFile, {
      family: "classification",
      inputs: "table",
      label_cols: ["diagnosis"],
      data_cols: dataCols,
      images_col: null,
      split_col: null,
    });
    expect(out.report.errors).toEqual([]);
    expect(out.report.valid).toBe(true);
    expect(out.report.summary.rows).toBe(569);
    expect(out.report.summary.class_counts).toEqual({ diagnosis: { M: 212, B: 357 } });
    expect(out.report.summary.features!.every((f) => f.type === "numeric")).toBe(true);
    expect(out.problem).toBe("binary");
    const s = out.split!;
    expect(s.train.length + s.val.length + s.test.length).toBe(569);
    expect(s.test.length).toBeGreaterThan(75);
    expect(s.test.length).toBeLessThan(95);
  });
});

describe.skipIf(!has("breastmnist/breastmnist_trainval.npz"))("BreastMNIST (vision task, real images)", () => {
  it("converted to PNGs + labels.csv, is valid with 624 grey 28x28 images", async () => {
    const npz = await readNpz(path.join(shared, "breastmnist/breastmnist_trainval.npz"));
    const zipFile = path.join(tmp(), "breast.zip");
    const w = new ZipWriter(zipFile);
    const lines = ["patient_id,image,label"];
    for (const part of ["train", "val"]) {
      const imgs = npz[`${part}_images`];
      const labels = npz[`${part}_labels`];
      const [n, h, wd] = imgs.shape;
      for (let i = 0; i < n; i++) {
        const png = await sharp(imgs.data.subarray(i * h * wd, (i + 1) * h * wd), { raw: { width: wd, height: h, channels: 1 } })
          .toColourspace("b-w")
          .png()
          .toBuffer();
        const name = `images/${part}_${String(i).padStart(4, "0")}.png`;
        w.add(`breastmnist/${name}`, png, { method: "store" });
        lines.push(`${part}_${i},${name},${labels.data[i]}`);
      }
    }
    w.add("breastmnist/labels.csv", lines.join("\n") + "\n").finish();
    const out = await prepare(zipFile, {
      family: "classification",
      inputs: "images",
      label_cols: ["label"],
      images_col: "image",
      data_cols: [],
      split_col: null,
    });
    expect(out.report.errors).toEqual([]);
    expect(out.report.summary).toMatchObject({
      rows: 624,
      patients: 624,
      images: 624,
      image_sizes: { width: { min: 28, max: 28 }, height: { min: 28, max: 28 }, channels: { "1": 624 } },
    });
    const counts = out.report.summary.class_counts!.label;
    expect(Object.keys(counts).sort()).toEqual(["0", "1"]);
    expect(counts["0"] + counts["1"]).toBe(624);
    expect(out.root!.endsWith("breastmnist")).toBe(true);
  });
});

describe.skipIf(!has("bccd/Annotations"))("BCCD (detection, real Pascal VOC, exactly as published)", () => {
  it("is valid with warnings: the two zero-area boxes are left out, named, counted, and absent from the table", async () => {
    // The published layout (train + val): Annotations/, JPEGImages/, ImageSets/Main/*.txt, unchanged bytes.
    const zipFile = path.join(tmp(), "bccd.zip");
    const w = new ZipWriter(zipFile);
    const walk = (rel: string): string[] =>
      fs
        .readdirSync(path.join(shared, "bccd", rel), { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.posix.join(rel, e.name)) : [path.posix.join(rel, e.name)]));
    for (const f of ["Annotations", "JPEGImages", "ImageSets"].flatMap(walk).sort()) {
      w.add(`BCCD/${f}`, fs.readFileSync(path.join(shared, "bccd", f)), { method: f.endsWith(".jpg") ? "store" : "deflate" });
    }
    w.finish();
    const out = await prepare(zipFile, {
      family: "detection",
      inputs: "images",
      label_cols: ["cell"],
      images_col: "image",
      data_cols: [],
      split_col: null,
    });
    expect(out.report.errors).toEqual([]);
    expect(out.report.valid).toBe(true);
    expect(out.report.summary.format).toBe("voc");
    expect(Object.keys(out.report.summary.class_counts!.label).sort()).toEqual(["Platelets", "RBC", "WBC"]);
    // BloodImage_00338 and _00343 each carry a box with xmin == xmax and ymin == ymax: real annotation slips.
    const degenerate = out.report.warnings.filter((p) => p.code === "box_degenerate");
    expect(degenerate.map((p) => p.path)).toEqual(["BCCD/Annotations/BloodImage_00338.xml", "BCCD/Annotations/BloodImage_00343.xml"]);
    expect(degenerate[0].message).toContain("(504, 337, 504, 337)");
    expect(out.report.summary).toMatchObject({
      boxes: 3941,
      boxes_dropped: 2,
      images: 292,
      image_sizes: { width: { min: 640, max: 640 }, height: { min: 480, max: 480 } },
    });
    // The table handed to the pipeline holds the 3,941 boxes kept, none of them without area.
    const lines = fs
      .readFileSync(out.table!, "utf8")
      .trim()
      .split("\r\n")
      .slice(1)
      .map((l) => JSON.parse(`[${l}]`) as string[]);
    expect(lines).toHaveLength(3941);
    for (const [, , , x1, y1, x2, y2] of lines) expect(Number(x2) > Number(x1) && Number(y2) > Number(y1)).toBe(true);
    expect(lines.some((l) => l[1].endsWith("BloodImage_00338.jpg"))).toBe(true);
    expect(out.split!.train.length + out.split!.val.length + out.split!.test.length).toBe(292);
  });
});
