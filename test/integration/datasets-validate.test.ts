import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip, png, visionDataset, type ZipEntryOptions } from "../helpers/zips.js";

// One generated zip per kind of fault, each uploaded and checked through POST /v1/datasets/validate:
// the right code, at the right row / column / path. Rows are spreadsheet rows (header = 1); in
// visionDataset() patient p's images are rows 2 + 2p and 3 + 2p.

type Entries = Record<string, Buffer | string>;
const VISION = { task: "vision", label_cols: ["label"], images_col: "image" };
const DATA = { task: "data", label_cols: ["y"], data_cols: ["age", "sex"] };
const DETECT = { task: "vision", type_of_experiment: "detection", label_cols: ["cls"], images_col: "img" };

const editCsv = (e: Entries, f: (lines: string[]) => string[]) => {
  e["labels.csv"] = f(String(e["labels.csv"]).trimEnd().split("\n")).join("\n") + "\n";
  return e;
};
function dataCsv(mut: (lines: string[]) => string[] = (l) => l): Entries {
  const lines = ["id,age,sex,y"];
  for (let i = 0; i < 20; i++) lines.push(`${i},${30 + i},${i % 2 ? "F" : "M"},${i % 2}`);
  return { "data.csv": mut(lines).join("\n") + "\n" };
}
async function detection(rows: string[]): Promise<Entries> {
  return { "boxes.csv": ["pid,img,cls,x1,y1,x2,y2", ...rows].join("\n"), "a.png": await png(20, 10), "b.png": await png(20, 10, 3, 1) };
}

describe("POST /v1/datasets/validate", () => {
  let server: TestServer;
  let user: UserWithKey;
  let n = 0;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  async function upload(entries: Entries, opts: Record<string, ZipEntryOptions> = {}): Promise<string> {
    const zipPath = `${user.userId}/exp${++n}/data.zip`;
    const res = await fetch(`${server.url}/v1/files/${zipPath}`, {
      method: "PUT",
      headers: bearer(user.key),
      body: makeZip(entries, opts),
    });
    expect(res.status).toBe(201);
    return zipPath;
  }
  async function validate(
    entries: Entries,
    request: Record<string, unknown>,
    opts: Record<string, ZipEntryOptions> = {},
    headers: Record<string, string> = {},
  ) {
    const zip_gcloud = await upload(entries, opts);
    const res = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", ...headers }),
      body: JSON.stringify({ zip_gcloud, ...request }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  }

  it("a good vision zip is valid with a correct summary", async () => {
    const r = await validate(await visionDataset({ top: "study/" }), VISION);
    expect(r.errors).toEqual([]);
    expect(r.valid).toBe(true);
    expect(r.summary).toMatchObject({
      rows: 24,
      patients: 12,
      images: 24,
      top_level_folder: "study",
      class_counts: { label: { "0": 12, "1": 12 } },
    });
  });

  it("says each problem in the caller's language (Accept-Language), keeping its code, where and catalog key", async () => {
    const entries = await visionDataset();
    const en = await validate(entries, { ...VISION, label_cols: ["Label"] });
    const es = await validate(entries, { ...VISION, label_cols: ["Label"] }, {}, { "accept-language": "es-ES,es;q=0.9" });
    const [e, s] = [en.errors[0], es.errors[0]];
    expect(e).toMatchObject({ code: "column_missing", column: "Label", row: 1, key: "problems:dataset.column_missing_near" });
    expect(e.message).toMatch(/^the label column 'Label' is not in the CSV header \(did you mean 'label'\?\)/);
    expect(s).toEqual({
      ...e,
      message: expect.stringMatching(/^la columna de etiqueta «Label» no está en el encabezado del CSV \(¿quería decir «label»\?\)/),
    });
  });

  const cases: Array<[string, () => Promise<[Entries, Record<string, unknown>]>, Record<string, unknown>]> = [
    [
      "a label column not in the CSV",
      async () => [await visionDataset(), { ...VISION, label_cols: ["Label"] }],
      { code: "column_missing", column: "Label", row: 1 },
    ],
    [
      "an image missing from the zip",
      async () => {
        const e = await visionDataset();
        delete e["images/p1_0.png"];
        return [e, VISION];
      },
      { code: "image_not_found", row: 4, column: "image", path: "images/p1_0.png" },
    ],
    [
      "a space in an image path",
      async () => {
        const e = await visionDataset();
        e["images/p2 0.png"] = e["images/p2_0.png"];
        delete e["images/p2_0.png"];
        return [editCsv(e, (l) => l.map((x) => x.replace("images/p2_0.png", "images/p2 0.png"))), VISION];
      },
      { code: "image_path_character", row: 6, path: "images/p2 0.png" },
    ],
    [
      "an image that does not decode",
      async () => {
        const e = await visionDataset();
        e["images/p3_1.png"] = Buffer.from("not a png at all");
        return [e, VISION];
      },
      { code: "image_unreadable", row: 9, path: "images/p3_1.png" },
    ],
    [
      "one class only",
      async () => [editCsv(await visionDataset(), (l) => l.map((x, i) => (i ? x.replace(/,1,name_1$/, ",0,name_0") : x))), VISION],
      { code: "too_few_classes", column: "label" },
    ],
    [
      "a class with too few patients",
      async () => [await visionDataset({ patients: 8, classes: ["0", "1", "0", "2"] }), VISION],
      { code: "class_too_small", column: "label" },
    ],
    [
      "one image with two labels",
      async () => [editCsv(await visionDataset(), (l) => [...l, "P99,images/p0_0.png,1,name_1"]), VISION],
      { code: "image_conflicting_labels", row: 26, path: "images/p0_0.png" },
    ],
    [
      "a row with a missing field",
      async () => [editCsv(await visionDataset(), (l) => l.map((x, i) => (i === 6 ? x.replace(/,name_0$/, "") : x))), VISION],
      { code: "csv_row_length", row: 7 },
    ],
    [
      "no CSV in the zip",
      async () => {
        const e = await visionDataset();
        delete e["labels.csv"];
        return [e, VISION];
      },
      { code: "csv_missing" },
    ],
    [
      "a CSV that is not text (NUL bytes)",
      async () => {
        const e = await visionDataset();
        e["labels.csv"] = Buffer.concat([Buffer.from(String(e["labels.csv"])), Buffer.from([0xe9, 0x00, 0x0a])]);
        return [e, VISION];
      },
      { code: "csv_encoding", path: "labels.csv" },
    ],
    [
      "an empty entry in a data column",
      async () => [dataCsv((l) => l.map((x, i) => (i === 5 ? x.replace(/^4,34,/, "4,,") : x))), DATA],
      { code: "missing_value", row: 6, column: "age" },
    ],
    [
      "a non-numeric label for regression",
      async () => [dataCsv((l) => l.map((x, i) => (i === 3 ? x.replace(/,0$/, ",high") : x))), { ...DATA, model_type: 1 }],
      { code: "label_not_numeric", row: 4, column: "y" },
    ],
    [
      "a zip-slip entry",
      async () => [{ ...(await visionDataset()), "../../escape.txt": "x" }, VISION],
      { code: "zip_unsafe_path", path: "../../escape.txt" },
    ],
    [
      "a symlink",
      async () => [{ ...(await visionDataset()), "images/link.png": "/etc/passwd" }, VISION],
      { code: "zip_symlink", path: "images/link.png" },
    ],
    [
      "boxes inverted on both axes in most rows (x, y, w, h?)",
      async () => [await detection(["A,a.png,cell,9,8,5,5", "B,b.png,cell,12,6,3,2", "B,b.png,cell,1,1,5,5"]), DETECT],
      { code: "box_inverted", row: 2 },
    ],
    [
      "a box far outside the image",
      async () => [await detection(["A,a.png,cell,1,1,5,5", "B,b.png,cell,1,1,25,5"]), DETECT],
      { code: "box_outside_image", row: 3 },
    ],
    [
      "a class whose every box has no area",
      async () => [await detection(["A,a.png,cell,1,1,5,5", "B,b.png,dot,3,3,3,3"]), DETECT],
      { code: "class_no_boxes" },
    ],
    [
      "a box coordinate that is not a number",
      async () => [await detection(["A,a.png,cell,1,1,5,5", "B,b.png,cell,1,one,5,5"]), DETECT],
      { code: "box_not_numeric", row: 3, column: "y1" },
    ],
    [
      "a VOC file naming a missing image",
      async () => [
        {
          "Annotations/x.xml":
            "<annotation><filename>x.png</filename><object><name>c</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>3</xmax><ymax>3</ymax></bndbox></object></annotation>",
        },
        DETECT,
      ],
      { code: "image_not_found", path: "Annotations/x.xml" },
    ],
  ];

  it.each(cases)("reports %s", async (_name, build, expected) => {
    const [entries, request] = await build();
    const opts: Record<string, ZipEntryOptions> = "images/link.png" in entries ? { "images/link.png": { unixMode: 0o120777 } } : {};
    const r = await validate(entries, request, opts);
    expect(r.valid).toBe(false);
    expect(r.errors).toContainEqual(expect.objectContaining({ severity: "error", ...expected }));
  });

  it("a bomb is refused by ratio", async () => {
    const r = await validate({ ...(await visionDataset()), "images/zeros.bin": Buffer.alloc(32 * 1024 * 1024) }, VISION);
    expect(r.errors[0]).toMatchObject({ code: "zip_bomb", path: "images/zeros.bin" });
  });

  it("fixes trivia with a warning and stays valid: repeated rows and unlabelled rows are left out", async () => {
    const r = await validate(
      editCsv(await visionDataset(), (l) => [...l.map((x, i) => (i === 4 ? x.replace(/,1,name_1$/, ",,name_1") : x)), l[3]]),
      VISION,
    );
    expect(r.errors).toEqual([]);
    expect(r.warnings).toContainEqual(expect.objectContaining({ severity: "warning", code: "duplicate_row", row: 26 }));
    expect(r.warnings).toContainEqual(expect.objectContaining({ severity: "warning", code: "label_missing", row: 5, column: "label" }));
    expect(r.summary.rows).toBe(23); // 24 + 1 repeat - the repeat - the unlabelled row
  });

  it("cleans detection boxes with a warning each: zero-area dropped, overhang clipped, corners swapped", async () => {
    const r = await validate(
      await detection([
        "A,a.png,cell,1,1,5,5",
        "A,a.png,cell,4,4,4,4",
        "B,b.png,cell,2,2,22,9",
        "B,b.png,cell,9,1,5,5",
        "B,b.png,cell,3,3,3.4,6",
      ]),
      DETECT,
    );
    expect(r.errors).toEqual([]);
    expect(r.valid).toBe(true);
    const w = (code: string) => r.warnings.filter((p: any) => p.code === code).map((p: any) => [p.row, p.path]);
    expect(w("box_degenerate")).toEqual([
      [3, "a.png"],
      [6, "b.png"],
    ]);
    expect(w("box_clipped")).toEqual([[4, "b.png"]]);
    expect(w("box_corners_swapped")).toEqual([[5, "b.png"]]);
    expect(r.warnings.find((p: any) => p.code === "box_clipped").message).toContain("clipped to (2, 2, 20, 9)");
    expect(r.summary).toMatchObject({
      boxes: 3,
      boxes_dropped: 2,
      boxes_clipped: 1,
      boxes_swapped: 1,
      class_counts: { label: { cell: 3 } },
    });
  });

  it("a column name with a line break is valid but warned about, naming its position and what it holds (issue 42)", async () => {
    const hostile = "radius\ntouch PWNED #";
    const entries = dataCsv((l) => [`id,age,"${hostile}",y`, ...l.slice(1).map((x) => x.replace(/,[FM],/, ",1,"))]);
    const r = await validate(entries, { ...DATA, data_cols: ["age", hostile] });
    expect(r.errors).toEqual([]);
    expect(r.valid).toBe(true);
    const warned = r.warnings.filter((p: any) => p.code === "csv_header_control_character");
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ severity: "warning", row: 1, column: hostile });
    expect(warned[0].message).toMatch(/^column 3's name contains a line break;/);
    expect(r.summary.problem_counts.csv_header_control_character).toBe(1);
  });

  it("a patient with different labels is a warning, not an error", async () => {
    const r = await validate(
      editCsv(await visionDataset(), (l) => l.map((x, i) => (i === 2 ? x.replace(/,0,name_0$/, ",1,name_1") : x))),
      VISION,
    );
    expect(r.valid).toBe(true);
    expect(r.warnings).toContainEqual(expect.objectContaining({ code: "patient_mixed_labels", row: 3, column: "label" }));
  });

  it("lists every bad field of the body in one 400, and hides other users' zips", async () => {
    const res = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ task: "sound", label_cols: [] }),
    });
    expect(res.status).toBe(400);
    const fields = ((await res.json()) as { error: { details: Array<{ field: string }> } }).error.details
      .map((d: { field: string }) => d.field)
      .sort();
    expect(fields).toEqual(["label_cols", "task", "zip_gcloud"]);
    const other = await createUserWithKey(server);
    const zip_gcloud = await upload(await visionDataset());
    const hidden = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(other.key, { "content-type": "application/json" }),
      body: JSON.stringify({ zip_gcloud, ...VISION }),
    });
    expect(hidden.status).toBe(404);
  });

  it("GET /v1/datasets/columns lists the CSV's columns with types, examples and missing counts", async () => {
    const zip_gcloud = await upload(dataCsv((l) => l.map((x, i) => (i === 2 ? x.replace(/,F,/, ",,") : x))));
    const res = await fetch(`${server.url}/v1/datasets/columns?zip_gcloud=${encodeURIComponent(zip_gcloud)}`, {
      headers: bearer(user.key),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rows: number; columns: unknown[] };
    expect(body.rows).toBe(20);
    expect(body.columns).toEqual([
      { name: "id", type: "numeric", examples: ["0", "1", "2"], missing: 0 },
      { name: "age", type: "numeric", examples: ["30", "31", "32"], missing: 0 },
      // value_counts: only where values repeat (the form offers a binary label's positive class from it).
      { name: "sex", type: "categorical", examples: ["M", "F"], missing: 1, value_counts: { M: 10, F: 9 } },
      { name: "y", type: "numeric", examples: ["0", "1"], missing: 0, value_counts: { "0": 10, "1": 10 } },
    ]);
  });
});
