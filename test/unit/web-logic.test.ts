import { describe, expect, it } from "vitest";
import type { ColumnInfo, Model } from "../../web/src/api/types";
import { uploadPath } from "../../web/src/components/Uploader";
import { inputCandidates, isSplitColumn, proposeColumns } from "../../web/src/lib/columns";
import { formatBytes, proposeExperimentId } from "../../web/src/lib/format";
import { gradcamPixels, rampColour } from "../../web/src/lib/gradcam";
import { match } from "../../web/src/lib/router";
import { predictSnippets } from "../../web/src/lib/snippets";
import { unseenValueNotes } from "../../web/src/lib/unseen";

// The dashboard's logic outside React: what the column pickers propose, the /predict snippets, small formatters.

const col = (name: string, type: ColumnInfo["type"], examples: string[] = []): ColumnInfo => ({ name, type, examples, missing: 0 });

describe("column pickers: proposals", () => {
  it("a clinical table: the label by name, every other column but the patient id as input", () => {
    const p = proposeColumns([
      col("patient_id", "categorical", ["P1"]),
      col("age", "numeric"),
      col("sex", "categorical", ["F", "M"]),
      col("diagnosis", "categorical", ["M", "B"]),
      col("bmi", "numeric"),
    ]);
    expect(p).toEqual({ task: "data", label_cols: ["diagnosis"], images_col: null, data_cols: ["age", "sex", "bmi"], split_col: null });
  });

  it("an image table: task vision, the image_path column, and no data_cols", () => {
    const p = proposeColumns([
      col("patient_id", "categorical"),
      col("image", "image_path", ["a.png"]),
      col("label", "categorical", ["0", "1"]),
    ]);
    expect(p).toMatchObject({ task: "vision", images_col: "image", label_cols: ["label"], data_cols: [] });
  });

  it("a split column is recognised by name or by its train/validation/test values, and kept out of labels and inputs", () => {
    expect(isSplitColumn(col("ML_USE", "categorical", ["x"]))).toBe(true);
    expect(isSplitColumn(col("part", "categorical", ["train", "Validation", "TEST"]))).toBe(true);
    expect(isSplitColumn(col("part", "categorical", ["train", "other"]))).toBe(false);
    const p = proposeColumns([
      col("id", "numeric"),
      col("f1", "numeric"),
      col("outcome", "categorical", ["0", "1"]),
      col("part", "categorical", ["train", "test"]),
    ]);
    expect(p).toMatchObject({ split_col: "part", label_cols: ["outcome"], data_cols: ["f1"] });
  });

  it("with no label-like name, the last usable column is the label; of several label-like names, the first", () => {
    expect(proposeColumns([col("id", "numeric"), col("a", "numeric"), col("b", "numeric"), col("empty", "empty")]).label_cols).toEqual([
      "b",
    ]);
    const p = proposeColumns([
      col("id", "numeric"),
      col("x", "numeric"),
      col("label", "numeric", ["0", "1"]),
      col("diagnosis", "categorical", ["benign"]),
    ]);
    expect(p.label_cols).toEqual(["label"]);
    expect(p.data_cols).toEqual(["x", "diagnosis"]);
  });

  it("non-English headers: a label-like name in Spanish (any accents or case), else column 2 when it holds two values", () => {
    const counts = (a: number, b: number) => ({ si: a, no: b });
    const spanish = proposeColumns([
      col("id_paciente", "categorical", ["P1"]),
      col("Diagnóstico", "categorical", ["maligno", "benigno"]),
      col("edad", "numeric"),
      col("glucosa", "numeric"),
    ]);
    expect(spanish).toMatchObject({ label_cols: ["Diagnóstico"], data_cols: ["edad", "glucosa"] });
    const unknownWords = proposeColumns([
      col("编号", "categorical", ["P1"]),
      { ...col("诊断", "categorical", ["si", "no"]), value_counts: counts(30, 70) },
      col("年龄", "numeric"),
      col("血糖", "numeric"),
    ]);
    expect(unknownWords).toMatchObject({ label_cols: ["诊断"], data_cols: ["年龄", "血糖"] });
  });

  it("input candidates follow the chosen label, images and split, and never offer image paths or empty columns", () => {
    const cols = [
      col("id", "numeric"),
      col("img", "image_path"),
      col("a", "numeric"),
      col("b", "categorical"),
      col("e", "empty"),
      col("y", "categorical"),
    ];
    expect(inputCandidates(cols, { label_cols: ["y"], images_col: "img", split_col: null }).map((c) => c.name)).toEqual(["a", "b"]);
    expect(inputCandidates(cols, { label_cols: ["a"], images_col: null, split_col: "b" }).map((c) => c.name)).toEqual(["y"]);
  });
});

describe("predict snippets", () => {
  const tabular = { kind: "tabular", inputs: { name: "x", data_cols: ["age", "sex"] } } as Pick<Model, "kind" | "inputs">;
  const vision = { kind: "vision_classification", inputs: { name: "x" } } as Pick<Model, "kind" | "inputs">;

  it("tabular: the values given, in data_cols order, and the key only as $BUILDER_API_KEY", () => {
    const s = predictSnippets("https://builder.hospital.org/", 42, tabular, [63, 1]);
    expect(s.curl).toContain("curl -sS -X POST 'https://builder.hospital.org/v1/experiments/42/predict'");
    expect(s.curl).toContain(`-H "Authorization: Bearer $BUILDER_API_KEY"`);
    expect(s.curl).toContain(`-d '{"message":[63,1]}'`);
    expect(s.curl).toContain("in this order: age, sex");
    expect(s.python).toContain(`json={"message": [63, 1]}`);
    expect(s.python).toContain("os.environ['BUILDER_API_KEY']");
    expect(s.javascript).toContain("process.env.BUILDER_API_KEY");
    expect(s.javascript).toContain("JSON.stringify({ message: [63,1] })");
  });

  it("tabular: an unknown value is null in every language (None in Python)", () => {
    const s = predictSnippets("http://h", 1, tabular, [null, 1]);
    expect(s.curl).toContain(`{"message":[null,1]}`);
    expect(s.python).toContain(`json={"message": [None, 1]}`);
    expect(s.javascript).toContain("JSON.stringify({ message: [null,1] })");
  });

  it("tabular without values: zeros of the right length; vision: a local image file, and a link named", () => {
    expect(predictSnippets("http://h", 1, tabular).curl).toContain(`{"message":[0,0]}`);
    const v = predictSnippets("http://h", 7, vision);
    // an image model's snippets send a local file (run for real in web-snippets-image-file.test.ts); a link is named
    expect(v.curl).toContain("base64 < scan.png");
    expect(v.python).toContain(`open("scan.png", "rb")`);
    expect(v.javascript).toContain(`readFile("scan.png")`);
    for (const text of Object.values(v)) expect(text).toContain(`{"message": "https://example.org/image.png"}`);
  });

  it("every snippet names the experiment's own URL and no other secret", () => {
    for (const text of Object.values(predictSnippets("http://localhost:8080", 3, tabular, [1, 2]))) {
      expect(text).toContain("http://localhost:8080/v1/experiments/3/predict");
      expect(text).not.toMatch(/bld_/);
    }
  });
});

describe("small helpers", () => {
  it("upload paths are valid bucket segments whatever the file name", () => {
    expect(uploadPath("My scans (v2).ZIP", 0)).toBe("upload-0/My_scans_v2_.zip");
    expect(uploadPath("../../etc/passwd.zip", 36)).toBe("upload-10/etc_passwd.zip");
    expect(uploadPath("été.zip", 1)).toMatch(/^upload-1\/[A-Za-z0-9._-]+\.zip$/);
    // a bare table keeps its extension: the server zips it (a .csv named .zip would be refused as not a zip)
    expect(uploadPath("Pima cohort.CSV", 0)).toBe("upload-0/Pima_cohort.csv");
    expect(uploadPath("datos 2024.xlsx", 0)).toBe("upload-0/datos_2024.xlsx");
    expect(uploadPath("notes.txt", 0)).toBe("upload-0/notes.txt.zip");
  });

  it("experiment ids: one more than the highest, 1 for the first", () => {
    expect(proposeExperimentId([])).toBe(1);
    expect(proposeExperimentId([3, 12, 5])).toBe(13);
  });

  it("bytes in decimal units", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1_500_000)).toBe("1.5 MB");
    expect(formatBytes(2_340_000_000)).toBe("2.3 GB");
  });

  it("routes match with their parameters", () => {
    expect(match("/experiments/:id/try", "/experiments/12/try")).toEqual({ id: "12" });
    expect(match("/experiments/:id", "/experiments/12/try")).toBeNull();
  });

  it("Grad-CAM colours: the ramp's ends, and alpha rising with the value", () => {
    expect(rampColour(0)).toEqual([0, 0, 4]);
    expect(rampColour(1)).toEqual([252, 255, 164]);
    const px = gradcamPixels([[0, 255]]);
    expect([...px.slice(0, 4)]).toEqual([0, 0, 4, 0]);
    expect(px[7]).toBe(255);
  });
});

describe("unseen values in a Retrospective report", () => {
  it("says per column how many rows were filled, with what, and nothing when none were", () => {
    const report = {
      rows: 30,
      unseen_values: [
        { column: "x1", rows: 2, examples: ["NA", "?"], filled_with: "training median", value: 0.25 },
        { column: "site", rows: 1, examples: ["west"], filled_with: "most frequent training category" },
      ],
    };
    expect(unseenValueNotes(report, 30)).toEqual([
      "x1: 2 of 30 rows held values the model never saw in training ('NA', '?'); these were scored with the training median (0.25).",
      "site: 1 of 30 rows held values the model never saw in training ('west'); these were scored with the most frequent training category.",
    ]);
    expect(unseenValueNotes({ rows: 30 })).toEqual([]);
    expect(unseenValueNotes(null)).toEqual([]);
  });
});
