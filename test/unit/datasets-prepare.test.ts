import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { prepareDataset, type DatasetTask } from "../../src/datasets/prepare.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";
import { makeZip, png, visionDataset } from "../helpers/zips.js";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "prep-"));
const config = parseConfig({ BUILDER_DATA_DIR: os.tmpdir() });

async function prepare(zip: Buffer, request: DatasetTask, split: "train_val_test" | "all_test" = "train_val_test") {
  const bucket = new LocalBucket(tmp());
  await bucket.write("u/e/d.zip", Readable.from([zip]));
  const workDir = tmp();
  const out = await prepareDataset({ bucket, config }, { zipPath: "u/e/d.zip", workDir, task: request, seed: 7, split });
  return { out, workDir };
}

const vision: DatasetTask = {
  family: "classification",
  inputs: "images",
  label_cols: ["label"],
  images_col: "image",
  data_cols: [],
  split_col: null,
};

describe("prepareDataset", () => {
  it("prepares a good vision zip: table, root without the wrapper folder, patient split", async () => {
    const zip = makeZip(await visionDataset({ top: "study/" }));
    const { out } = await prepare(zip, vision);
    expect(out.report.errors).toEqual([]);
    expect(out.report.valid).toBe(true);
    expect(out.sha256).toBe(createHash("sha256").update(zip).digest("hex"));
    expect(out.root!.endsWith(`${path.sep}study`)).toBe(true);
    expect(out.problem).toBe("binary");
    expect(out.idCol).toBe("patient_id");
    expect(out.classNameCol).toBe("diagnosis");
    const lines = fs.readFileSync(out.table!, "utf8").trim().split("\r\n");
    expect(lines[0]).toBe('"patient_id","image","label","diagnosis"');
    expect(lines[1]).toBe('"P0","images/p0_0.png","0","name_0"');
    expect(fs.existsSync(path.join(out.root!, "images/p0_0.png"))).toBe(true);
    const s = out.split!;
    expect([...s.train, ...s.val, ...s.test].sort()).toEqual(Array.from({ length: 12 }, (_, i) => `P${i}`).sort());
    expect(new Set([...s.train, ...s.val, ...s.test]).size).toBe(12);
    expect(s.val.length).toBeGreaterThan(0);
    expect(s.test.length).toBeGreaterThan(0);
    expect(out.report.summary).toMatchObject({ rows: 24, patients: 12, images: 24, images_per_patient: { min: 2, max: 2, mean: 2 } });
    expect(out.report.summary.class_counts).toEqual({ label: { "0": 12, "1": 12 } });
    expect(out.report.summary.image_sizes).toMatchObject({ width: { min: 8, max: 10 }, height: { min: 8, max: 8 }, channels: { "3": 24 } });
  });

  it("puts every patient in test for all_test, and is reproducible for a seed", async () => {
    const zip = makeZip(await visionDataset({ classes: ["a", "b", "c"] }));
    const a = (await prepare(zip, vision, "all_test")).out;
    expect(a.problem).toBe("multiclass");
    expect(a.split!.test).toHaveLength(12);
    expect(a.split!.train).toEqual([]);
    const b1 = (await prepare(zip, vision)).out.split;
    const b2 = (await prepare(zip, vision)).out.split;
    expect(b1).toEqual(b2);
  });

  it("stops with an AbortError when cancelled", async () => {
    const bucket = new LocalBucket(tmp());
    await bucket.write("u/e/d.zip", Readable.from([makeZip(await visionDataset())]));
    const ac = new AbortController();
    ac.abort();
    await expect(
      prepareDataset(
        { bucket, config },
        { zipPath: "u/e/d.zip", workDir: tmp(), task: vision, seed: 1, split: "train_val_test", signal: ac.signal },
      ),
    ).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("reports a missing zip with a code instead of throwing", async () => {
    const bucket = new LocalBucket(tmp());
    const out = await prepareDataset(
      { bucket, config },
      { zipPath: "u/e/none.zip", workDir: tmp(), task: vision, seed: 1, split: "train_val_test" },
    );
    expect(out.report.valid).toBe(false);
    expect(out.report.errors[0].code).toBe("zip_not_found");
  });

  it("prepares a data zip with ';' and decimal commas, a BOM and CRLF", async () => {
    const rows = ["\ufeffid;age;sex;y"];
    for (let i = 0; i < 20; i++) rows.push(`${i};${40 + i},5;${i % 2 ? "F" : "M"};${i % 2}`);
    const zip = makeZip({ "data.csv": rows.join("\r\n") + "\r\n" });
    const { out } = await prepare(zip, {
      family: "classification",
      inputs: "table",
      label_cols: ["y"],
      data_cols: ["age", "sex"],
      images_col: null,
      split_col: null,
    });
    expect(out.report.errors).toEqual([]);
    expect(out.report.summary.features).toEqual([
      { name: "age", type: "numeric", min: 40.5, max: 59.5, missing: 0 },
      { name: "sex", type: "categorical", categories: 2, missing: 0 },
    ]);
    const lines = fs.readFileSync(out.table!, "utf8").split("\r\n");
    expect(lines[0]).toBe('"id","age","sex","y"');
    expect(lines[1]).toBe('"0","40.5","M","0"');
    expect(out.dataCols).toEqual(["age", "sex"]);
    expect(out.imagesCol).toBeNull();
  });

  it("a column of numbers with missing-value markers is numeric with missing values, markers kept for the pipeline", async () => {
    const rows = ["id,age,note,y"];
    for (let i = 0; i < 20; i++) rows.push(`${i},${i % 5 === 0 ? (i % 10 ? "?" : "NA") : 40 + i},${i % 5 === 0 ? "NA" : "ok"},${i % 2}`);
    const zip = makeZip({ "data.csv": rows.join("\n") + "\n" });
    const { out } = await prepare(zip, {
      family: "classification",
      inputs: "table",
      label_cols: ["y"],
      data_cols: ["age", "note"],
      images_col: null,
      split_col: null,
    });
    expect(out.report.errors).toEqual([]);
    expect(out.report.summary.features).toEqual([
      { name: "age", type: "numeric", min: 41, max: 59, missing: 4 },
      { name: "note", type: "categorical", categories: 2, missing: 0 }, // text with NA stays text: "NA" is one of its values
    ]);
    expect(out.report.warnings.map((w) => [w.code, w.column])).toContainEqual(["missing_values", "age"]);
    expect(out.report.warnings.find((w) => w.code === "missing_values")!.message).toMatch(/no value in 4 of 20 rows/);
    const lines = fs.readFileSync(out.table!, "utf8").split("\n");
    expect(lines[1]).toBe('"0","NA","NA","0"\r');
  });

  it("regression: numeric labels, problem regression", async () => {
    const rows = ["id,x,y"];
    for (let i = 0; i < 30; i++) rows.push(`${i},${i * 2},${i / 10}`);
    const { out } = await prepare(makeZip({ "d.csv": rows.join("\n") }), {
      family: "regression",
      inputs: "table",
      label_cols: ["y"],
      data_cols: ["x"],
      images_col: null,
      split_col: null,
    });
    expect(out.report.valid).toBe(true);
    expect(out.problem).toBe("regression");
    expect(out.report.summary.label_range).toEqual({ min: 0, max: 2.9 });
    expect(out.split!.train.length + out.split!.val.length + out.split!.test.length).toBe(30);
    // With ';' a decimal-comma label is written with a point, so the pipeline reads a number.
    const semi = ["id;x;y", ...Array.from({ length: 12 }, (_, i) => `${i};${i};${i},5`)].join("\n");
    const s2 = (
      await prepare(makeZip({ "d.csv": semi }), {
        family: "regression",
        inputs: "table",
        label_cols: ["y"],
        data_cols: ["x"],
        images_col: null,
        split_col: null,
      })
    ).out;
    expect(s2.report.errors).toEqual([]);
    expect(fs.readFileSync(s2.table!, "utf8").split("\r\n")[2]).toBe('"1","1","1.5"');
  });

  it("hands the pipeline the cleaned boxes: zero-area left out, overhang clipped, corners ordered", async () => {
    const img = await png(20, 10);
    const det: DatasetTask = {
      family: "detection",
      inputs: "images",
      label_cols: ["cls"],
      images_col: "img",
      data_cols: [],
      split_col: null,
    };
    const rows = ["A,a.png,cell,1,1,5,5", "A,a.png,cell,4,4,4,4", "B,b.png,cell,-2,1,21,9", "B,b.png,cell,9,1,5,5", "C,c.png,cell,3,3,3,7"];
    const zip = makeZip({ "boxes.csv": ["pid,img,cls,x1,y1,x2,y2", ...rows].join("\n"), "a.png": img, "b.png": img, "c.png": img });
    const { out } = await prepare(zip, det);
    expect(out.report.errors).toEqual([]);
    // c.png's only box had no area: the image is left out rather than taught as background.
    expect(fs.readFileSync(out.table!, "utf8").trim().split("\r\n")).toEqual([
      '"pid","img","cls","x1","y1","x2","y2"',
      '"A","a.png","cell","1","1","5","5"',
      '"B","b.png","cell","0","1","20","9"',
      '"B","b.png","cell","5","1","9","5"',
    ]);
    expect([...out.split!.train, ...out.split!.val, ...out.split!.test].sort()).toEqual(["A", "B"]);
  });

  it("normalises a detection CSV, a VOC and a COCO dataset to one row per box", async () => {
    const img = await png(20, 10);
    const det: DatasetTask = {
      family: "detection",
      inputs: "images",
      label_cols: ["cls"],
      images_col: "img",
      data_cols: [],
      split_col: null,
    };
    const csv = makeZip({
      "boxes.csv": "pid,img,cls,x1,y1,x2,y2\nA,a.png,cell,1,1,5,5\nA,a.png,cell,2,2,8,9\nB,b.png,,,,,\n",
      "a.png": img,
      "b.png": img,
    });
    const c = (await prepare(csv, det)).out;
    expect(c.report.errors).toEqual([]);
    expect(c.problem).toBe("detection");
    expect(fs.readFileSync(c.table!, "utf8").split("\r\n").slice(0, 4)).toEqual([
      '"pid","img","cls","x1","y1","x2","y2"',
      '"A","a.png","cell","1","1","5","5"',
      '"A","a.png","cell","2","2","8","9"',
      '"B","b.png","","","","",""',
    ]);
    const voc = makeZip({
      "Annotations/a.xml":
        "<annotation><filename>a.png</filename><object><name>wbc</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>10</xmax><ymax>9</ymax></bndbox></object></annotation>",
      "JPEGImages/a.png": img,
    });
    const v = (await prepare(voc, det)).out;
    expect(v.report.errors).toEqual([]);
    expect(v.report.summary.format).toBe("voc");
    expect(fs.readFileSync(v.table!, "utf8").split("\r\n")[1]).toBe('"a","JPEGImages/a.png","wbc","1","2","10","9"');
    const coco = makeZip({
      "ann.json": JSON.stringify({
        images: [
          { id: 1, file_name: "a.png" },
          { id: 2, file_name: "b.png" },
        ],
        annotations: [{ image_id: 1, category_id: 3, bbox: [1, 1, 4, 5] }],
        categories: [{ id: 3, name: "rbc" }],
      }),
      "images/a.png": img,
      "images/b.png": img,
    });
    const k = (await prepare(coco, det)).out;
    expect(k.report.errors).toEqual([]);
    expect(fs.readFileSync(k.table!, "utf8").split("\r\n").slice(1, 3)).toEqual([
      '"a","images/a.png","rbc","1","1","5","6"',
      '"b","images/b.png","","","","",""',
    ]);
  });
});
