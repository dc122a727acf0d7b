import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { prepareDataset, type DatasetTask } from "../../src/datasets/prepare.js";
import { ReportBuilder } from "../../src/datasets/report.js";
import { splitFromColumn, splitPartOf, type SplitColumnRow } from "../../src/datasets/split.js";
import { experimentRequestSchema } from "../../src/experiments/request.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";
import { makeZip, png } from "../helpers/zips.js";

// split_col: the user's own train/validation/test assignment (like AutoML Vision's ML_USE column), patient-whole.

const rows = (spec: Array<[string, string, string?]>): SplitColumnRow[] =>
  spec.map(([patient, value, label], i) => ({ row: i + 2, patient, value, labels: label === undefined ? undefined : [label] }));

function run(r: SplitColumnRow[], labelCols: string[] = []) {
  const report = new ReportBuilder();
  const split = splitFromColumn(r, 5, { column: "ml_use", labelCols, report });
  return { split, report: report.build() };
}

describe("splitFromColumn", () => {
  it("reads train / validation / val / test in any case and with spaces, one part per patient", () => {
    expect(["train", "TRAIN", " Validation ", "val", "VAL", "Test"].map(splitPartOf)).toEqual([
      "train",
      "train",
      "val",
      "val",
      "val",
      "test",
    ]);
    expect(["", "unassigned", "training", "valid", "tests"].map(splitPartOf)).toEqual([null, null, null, null, null]);
    const { split, report } = run(
      rows([
        ["b", "TRAIN"],
        ["a", "train"],
        ["a", "Train"],
        ["c", "VALIDATION"],
        ["d", "val"],
        ["e", "test"],
      ]),
    );
    expect(report.errors).toEqual([]);
    expect(split).toEqual({ seed: 5, train: ["a", "b"], val: ["c", "d"], test: ["e"] });
  });

  it("refuses a value that is not a part, naming the row and the column", () => {
    const { split, report } = run(
      rows([
        ["a", "train"],
        ["b", "holdout"],
        ["c", ""],
        ["d", "test"],
      ]),
    );
    expect(split).toBeNull();
    expect(report.errors).toHaveLength(2);
    expect(report.errors[0]).toMatchObject({ code: "split_value_invalid", row: 3, column: "ml_use" });
    expect(report.errors[0].message).toContain("'holdout'");
    expect(report.errors[1]).toMatchObject({ code: "split_value_invalid", row: 4, column: "ml_use" });
    expect(report.errors[1].message).toBe("row 4 has no value in the split column 'ml_use'; use train, validation (or val) or test");
  });

  it("refuses a patient whose rows name different parts, once per patient, naming the patient, both rows and the column", () => {
    const { split, report } = run(
      rows([
        ["a", "train"],
        ["p7", "train"],
        ["b", "val"],
        ["p7", "test"],
        ["p7", "val"],
        ["c", "test"],
      ]),
    );
    expect(split).toBeNull();
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatchObject({ code: "split_patient_mixed", row: 5, column: "ml_use" });
    expect(report.errors[0].message).toMatch(/patient 'p7' is in train on row 3 but in test on row 5/);
  });

  it("needs a patient in each of train, validation and test", () => {
    const { split, report } = run(
      rows([
        ["a", "train"],
        ["b", "train"],
        ["c", "test"],
      ]),
    );
    expect(split).toBeNull();
    expect(report.errors).toEqual([expect.objectContaining({ code: "split_part_empty", column: "ml_use" })]);
    expect(report.errors[0].message).toContain("no patient in validation");
  });

  it("warns when a class has no patient in a part", () => {
    const { split, report } = run(
      rows([
        ["a", "train", "x"],
        ["b", "train", "y"],
        ["c", "val", "x"],
        ["d", "val", "y"],
        ["e", "test", "x"],
      ]),
      ["label"],
    );
    expect(split).not.toBeNull();
    expect(report.warnings).toEqual([expect.objectContaining({ code: "split_class_missing", column: "ml_use" })]);
    expect(report.warnings[0].message).toBe("class 'y' of 'label' has no patient in test of the split column 'ml_use'");
  });
});

const config = parseConfig({ BUILDER_DATA_DIR: os.tmpdir() });
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "split-col-"));

/** A zip with the CSV and a small image for each path it names (column 2). */
async function prepare(csv: string, request: Partial<DatasetTask>) {
  const entries: Record<string, Buffer | string> = { "labels.csv": csv };
  const names = csv
    .split("\n")
    .slice(1)
    .map((line) => line.split(",")[1]);
  for (const [i, name] of names.entries()) entries[name] = await png(8, 8, 1, i);
  const bucket = new LocalBucket(tmp());
  await bucket.write("u/e/d.zip", Readable.from([makeZip(entries)]));
  const full: DatasetTask = {
    family: "classification",
    inputs: "images",
    label_cols: ["label"],
    images_col: "image",
    data_cols: [],
    split_col: null,
    ...request,
  };
  return prepareDataset({ bucket, config }, { zipPath: "u/e/d.zip", workDir: tmp(), task: full, seed: 3, split: "train_val_test" });
}

// 8 patients, 2 classes (4 patients each, so Builder's own split works too); patient P0 has two images.
const CSV = [
  "patient,image,label,ml_use",
  "P0,img/0.png,0,train",
  "P0,img/1.png,0,TRAIN",
  "P1,img/2.png,1,train",
  "P2,img/3.png,0,train",
  "P3,img/4.png,1,train",
  "P4,img/5.png,0,validation",
  "P5,img/6.png,1,val",
  "P6,img/7.png,0,test",
  "P7,img/8.png,1,Test",
].join("\n");

describe("prepareDataset with split_col", () => {
  it("uses the column's parts as the patient split and says so in the summary", async () => {
    const out = await prepare(CSV, { split_col: "ml_use" });
    expect(out.report.errors).toEqual([]);
    expect(out.split).toEqual({ seed: 3, train: ["P0", "P1", "P2", "P3"], val: ["P4", "P5"], test: ["P6", "P7"] });
    expect(out.report.summary.split).toEqual({ train: 4, val: 2, test: 2, from_column: "ml_use" });
    // Both classes are in every part (no split_class_missing); one test patient each is a small test part.
    expect(out.report.warnings.map((w) => w.code)).toEqual(["small_test_part"]);
    // The split column is not mistaken for the class names column.
    expect(out.classNameCol).toBeNull();
  });

  it("without split_col the seeded patient-grouped split is unchanged", async () => {
    const a = await prepare(CSV, {});
    expect(a.report.summary.split).not.toHaveProperty("from_column");
    const b = await prepare(CSV, {});
    expect(a.split).toEqual(b.split);
    expect(a.split!.train.length + a.split!.val.length + a.split!.test.length).toBe(8);
  });

  it("refuses a split column that is missing or is another column's role", async () => {
    const missing = await prepare(CSV, { split_col: "ML_USE" });
    expect(missing.report.valid).toBe(false);
    expect(missing.report.errors).toEqual([expect.objectContaining({ code: "column_missing", column: "ML_USE" })]);
    const conflict = await prepare(CSV, { split_col: "label" });
    expect(conflict.report.errors.map((e) => e.code)).toContain("column_role_conflict");
  });

  it("reports a mixed patient with row, column and patient, and a class too small for Builder's split is no error with a user split", async () => {
    const mixed = await prepare(CSV.replace("P0,img/1.png,0,TRAIN", "P0,img/1.png,0,test"), { split_col: "ml_use" });
    expect(mixed.report.valid).toBe(false);
    expect(mixed.report.errors).toEqual([expect.objectContaining({ code: "split_patient_mixed", row: 3, column: "ml_use" })]);
    expect(mixed.report.errors[0].message).toContain("patient 'P0'");
    // Class 2 has only 2 patients (one in train, one in test): too few for Builder's split, allowed with the user's.
    const small = `${CSV}\nP8,img/9.png,2,train\nP9,img/10.png,2,test`;
    expect((await prepare(small, {})).report.errors.map((e) => e.code)).toContain("class_too_small");
    const own = await prepare(small, { split_col: "ml_use" });
    expect(own.report.errors).toEqual([]);
    expect(own.report.warnings).toContainEqual(
      expect.objectContaining({
        code: "split_class_missing",
        message: expect.stringContaining("class '2' of 'label' has no patient in validation"),
      }),
    );
  });
});

describe("split_col in the experiment request", () => {
  const base = {
    zip_gcloud: "u/e/d.zip",
    label_cols: ["label"],
    images_col: "image",
    model_type: 0,
    optimization_type: 1,
    experiment_id: 1,
    user_id: "u",
    study_type: "Builder",
    task: "vision",
    optimization_metric: "AUC",
  };
  it("is optional, a non-empty column name, and refused for detection and Retrospective studies", () => {
    expect(experimentRequestSchema.parse({ ...base, split_col: "ml_use" }).split_col).toBe("ml_use");
    expect(experimentRequestSchema.parse(base).split_col).toBeUndefined();
    const paths = (body: object) => experimentRequestSchema.safeParse(body).error?.issues.map((i) => i.path.join("."));
    expect(paths({ ...base, split_col: " " })).toEqual(["split_col"]);
    expect(paths({ ...base, split_col: "s", type_of_experiment: "detection" })).toEqual(["split_col"]);
    expect(paths({ ...base, split_col: "s", study_type: "Retrospective", source_experiment_id: 2 })).toEqual(["split_col"]);
  });
});

describe("split_col in the OpenAPI document", () => {
  it("is described on POST /v1/experiments and POST /v1/datasets/validate", async () => {
    const { buildOpenApi } = await import("../../src/http/openapi.js");
    const { allRoutes } = await import("../../src/http/routes/index.js");
    const doc = buildOpenApi(allRoutes(), "test") as any;
    for (const p of ["/v1/experiments", "/v1/datasets/validate"]) {
      const field = doc.paths[p].post.requestBody.content["application/json"].schema.properties.split_col;
      expect(field.description).toMatch(/train, validation \(or val\) or test/);
    }
  });
});
