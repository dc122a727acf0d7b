import { describe, expect, it } from "vitest";
import { parseCsvText, parseNumber, sniffDelimiter } from "../../src/datasets/csv.js";
import { locateImage, pathCharProblem } from "../../src/datasets/images.js";
import { MAX_PER_CODE, problem, ReportBuilder } from "../../src/datasets/report.js";
import { allTest, assertDisjoint, patientStrata, splitPatients, warnSmallTestPart } from "../../src/datasets/split.js";
import { problemOf, type DatasetTask } from "../../src/datasets/types.js";
import { resolveZipPath } from "../../src/datasets/zip-path.js";

describe("CSV reading", () => {
  it("handles a BOM, ';', CRLF, quoted fields with the delimiter and newlines inside", () => {
    const r = new ReportBuilder();
    const t = parseCsvText(Buffer.from('\ufeffid;"note";y\r\n1;"a;b";0\r\n\r\n2;"two\r\nlines";1\r\n'), r, "x.csv");
    expect(r.errors).toEqual([]);
    expect(t.delimiter).toBe(";");
    expect(t.header).toEqual(["id", "note", "y"]);
    expect(t.rows).toEqual([["1", "a;b", "0"], null, ["2", "two\r\nlines", "1"]]);
  });

  it("reports a missing header, duplicate and empty column names", () => {
    const r = new ReportBuilder();
    parseCsvText(Buffer.from("1,2,3\n4,5,6\n"), r, "x.csv");
    expect(r.errors.map((e) => e.code)).toEqual(["csv_header_missing"]);
    const r2 = new ReportBuilder();
    parseCsvText(Buffer.from("a,,a\n1,2,3\n"), r2, "x.csv");
    expect(r2.errors.map((e) => [e.code, e.row])).toEqual([
      ["csv_header_empty", 1],
      ["csv_header_duplicate", 1],
    ]);
  });

  it("warns about line breaks, tabs, control and invisible characters in column names, naming the column's position (issue 42)", () => {
    const r = new ReportBuilder();
    const t = parseCsvText(
      Buffer.from('id,age,"radius\ntouch PWNED #","a\tb","x\u2028y",\u202ename,"esc\u001b[2J",zero\u200bwidth,y\n1,2,3,4,5,6,7,8,0\n'),
      r,
      "x.csv",
    );
    expect(r.errors).toEqual([]);
    expect(t.header[2]).toBe("radius\ntouch PWNED #"); // kept: the model's inputs must match the file
    const warned = r.warnings.filter((w) => w.code === "csv_header_control_character");
    expect(warned.map((w) => w.message.split(";")[0])).toEqual([
      "column 3's name contains a line break",
      "column 4's name contains a tab",
      "column 5's name contains a line break",
      "column 6's name contains a character that changes the text direction (U+202E)",
      "column 7's name contains a control character (U+001B)",
      "column 8's name contains an invisible character (U+200B)",
    ]);
    expect(warned[0]).toMatchObject({ severity: "warning", row: 1, column: "radius\ntouch PWNED #", path: "x.csv" });
    const clean = new ReportBuilder();
    parseCsvText(Buffer.from("id,age at entry,Größe (cm),y\n1,2,3,0\n"), clean, "x.csv");
    expect(clean.warnings).toEqual([]);
  });

  it("reads a tab-separated file (R's write.table, a spreadsheet's text export) with its spaces and empty fields", () => {
    const r = new ReportBuilder();
    const t = parseCsvText(Buffer.from("id\tage at entry\tnote\ty\r\n1\t50,5\t\t0\r\n2\t61\tre-admitted, twice\t1\r\n"), r, "x.csv");
    expect(r.errors).toEqual([]);
    expect(t.delimiter).toBe("\t");
    expect(t.header).toEqual(["id", "age at entry", "note", "y"]);
    expect(t.rows).toEqual([
      ["1", "50,5", "", "0"],
      ["2", "61", "re-admitted, twice", "1"],
    ]);
  });

  it("reads Excel's other encodings: Windows-1252 with a warning, UTF-16 by its BOM; NUL bytes are not text", () => {
    const cp1252 = new ReportBuilder();
    const t = parseCsvText(
      Buffer.concat([Buffer.from("id;fumador;y\n1;S"), Buffer.from([0xed]), Buffer.from(";1\n2;No;0\n")]),
      cp1252,
      "x.csv",
    );
    expect(t.rows[0]).toEqual(["1", "S\u00ed", "1"]);
    expect(cp1252.errors).toEqual([]);
    expect(cp1252.warnings.map((w) => w.code)).toEqual(["csv_encoding_guessed"]);
    const utf16 = new ReportBuilder();
    const u = parseCsvText(
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("id\tfumador\ty\r\n1\tS\u00ed\t1\r\n", "utf16le")]),
      utf16,
      "x.csv",
    );
    expect([u.header, u.rows, u.delimiter, utf16.warnings]).toEqual([["id", "fumador", "y"], [["1", "S\u00ed", "1"]], "\t", []]);
    expect(() => parseCsvText(Buffer.from([0x69, 0x64, 0xe9, 0x00, 0x0a]), new ReportBuilder(), "x.csv")).toThrow(/NUL bytes/);
  });

  it("drops what spreadsheets add around a table: empty trailing columns, rows of delimiters only", () => {
    const r = new ReportBuilder();
    const t = parseCsvText(Buffer.from("id,age,y,,\n1,50,0,,\n,,,,\n2,61,1,,\n,,,,\n,,,,\n"), r, "x.csv");
    expect(r.errors).toEqual([]);
    expect(t.header).toEqual(["id", "age", "y"]);
    expect(t.rows).toEqual([["1", "50", "0"], null, ["2", "61", "1"]]);
    const filled = new ReportBuilder();
    parseCsvText(Buffer.from("id,age,y,\n1,50,0,x\n"), filled, "x.csv");
    expect(filled.errors.map((e) => e.code)).toEqual(["csv_header_empty"]); // a value without a column name: refused
  });

  it("names an unnamed column 1 (R's write.csv, pandas' to_csv) the patient id instead of refusing it", () => {
    const r = new ReportBuilder();
    const t = parseCsvText(Buffer.from('"","age","y"\n"1",50,0\n"2",61,1\n'), r, "x.csv");
    expect(r.errors).toEqual([]);
    expect(t.header).toEqual(["patient_id", "age", "y"]);
    expect(r.warnings.map((w) => [w.code, w.column])).toEqual([["csv_id_unnamed", "patient_id"]]);
    const taken = new ReportBuilder();
    expect(parseCsvText(Buffer.from(",patient_id,patient_id_2,y\n1,a,b,0\n"), taken, "x.csv").header[0]).toBe("patient_id_3");
    expect(taken.errors).toEqual([]);
    const later = new ReportBuilder();
    parseCsvText(Buffer.from(",a,,y\n1,2,3,0\n"), later, "x.csv");
    expect(later.errors.map((e) => e.code)).toEqual(["csv_header_empty"]);
  });

  it("sniffs the delimiter outside quotes and reads decimal commas only where ',' is not the delimiter", () => {
    expect(sniffDelimiter('"a,b,c";d;e\n')).toBe(";");
    expect(sniffDelimiter("a,b;c,d\n")).toBe(",");
    expect(sniffDelimiter('"a,b"\tc\td\n')).toBe("\t");
    expect(parseNumber("3,5", ";")).toBe(3.5);
    expect(parseNumber("3,5", "\t")).toBe(3.5);
    expect(parseNumber("3,5", ",")).toBeNull();
    expect(parseNumber("-1e3", ",")).toBe(-1000);
    expect(parseNumber("12abc", ",")).toBeNull();
  });
});

describe("image paths", () => {
  it("names the offending character and suggests '_'", () => {
    expect(pathCharProblem("img/scan 01.png")).toMatchObject({ kind: "space", position: 9, suggestion: "img/scan_01.png" });
    expect(pathCharProblem("img/tórax.png")).toMatchObject({ char: "ó", kind: "other", codepoint: "U+00F3", suggestion: "img/t_rax.png" });
    expect(pathCharProblem("img\\a.png")!.suggestion).toBe("img/a.png");
    expect(pathCharProblem("img/ok-1_2.PNG")).toBeNull();
  });

  it("tolerates one top-level folder, with or without it in the CSV", () => {
    const files = new Set(["study/img/a.png"]);
    expect(locateImage("img/a.png", files, "study").rel).toBe("img/a.png");
    expect(locateImage("study/img/a.png", files, "study").rel).toBe("img/a.png");
    expect(locateImage("./img/a.png", files, "study").rel).toBe("img/a.png");
    const lower = new Map([["study/img/a.png", "study/img/a.png"]]);
    // A name that differs only in case is not found, but the near match is offered.
    expect(locateImage("IMG/A.png", files, "study", lower)).toEqual({ rel: null, near: "img/a.png" });
    expect(locateImage("img/b.png", files, "study", lower)).toEqual({ rel: null });
  });
});

describe("report", () => {
  it("caps each code's list and counts the rest", () => {
    const r = new ReportBuilder();
    for (let i = 0; i < MAX_PER_CODE + 10; i++)
      r.error("missing_value", problem("dataset.missing_value", { row: i, column: "age" }), { row: i });
    r.warn("constant_column", problem("dataset.constant_column", { column: "sex" }));
    const out = r.build();
    expect(out.valid).toBe(false);
    expect(out.errors).toHaveLength(MAX_PER_CODE);
    expect(out.errors_omitted).toBe(10);
    expect(out.summary.problem_counts).toEqual({ missing_value: MAX_PER_CODE + 10, constant_column: 1 });
    expect(out.warnings).toHaveLength(1);
  });
});

describe("patient split", () => {
  const patients = (n: number, classes: string[]) => new Map(Array.from({ length: n }, (_, i) => [`p${i}`, classes[i % classes.length]]));

  it("is 70/15/15, disjoint, stratified and reproducible", () => {
    const p = patients(200, ["a", "b", "b", "b"]);
    const s = splitPatients(p, 3);
    expect(s.train.length + s.val.length + s.test.length).toBe(200);
    expect(Math.abs(s.test.length - 30)).toBeLessThanOrEqual(2);
    expect(Math.abs(s.val.length - 30)).toBeLessThanOrEqual(2);
    const share = (ids: string[]) => ids.filter((id) => p.get(id) === "a").length / ids.length;
    expect(share(s.test)).toBeCloseTo(0.25, 1);
    expect(share(s.train)).toBeCloseTo(0.25, 1);
    expect(splitPatients(p, 3)).toEqual(s);
    expect(splitPatients(new Map([...p].reverse()), 3)).toEqual(s); // row order does not matter
    expect(splitPatients(p, 4)).not.toEqual(s);
  });

  it("puts one patient of each class of 3+ in val and test", () => {
    const s = splitPatients(patients(9, ["a", "b", "c"]), 1);
    for (const part of [s.train, s.val, s.test]) expect(new Set(part.map((id) => Number(id.slice(1)) % 3)).size).toBe(3);
  });

  it("strata: the majority label per patient; quantile bins for regression", () => {
    const strata = patientStrata([
      { patient: "A", label: "1" },
      { patient: "A", label: "0" },
      { patient: "A", label: "1" },
      { patient: "B", label: "0" },
    ]);
    expect(strata).toEqual(
      new Map([
        ["A", "1"],
        ["B", "0"],
      ]),
    );
    const reg = patientStrata(
      Array.from({ length: 30 }, (_, i) => ({ patient: `p${i}`, label: String(i) })),
      { regression: true },
    );
    expect(new Set(reg.values()).size).toBe(5);
    expect(reg.get("p0")).toBe("0");
    expect(reg.get("p29")).toBe("4");
  });

  it("says when the test part is small: a class with under 5 test patients, or under 20 in all for regression", () => {
    const warned = (p: Map<string, string>, regression = false) => {
      const r = new ReportBuilder();
      warnSmallTestPart(splitPatients(p, 3), regression ? null : p, r);
      return r.warnings.map((w) => [w.code, w.message]);
    };
    // HSAUR's plasma table: 32 patients, 6 of them positive, so one positive in test.
    const plasma = warned(patients(32, ["neg", "neg", "neg", "neg", "neg", "pos"]));
    expect(plasma).toEqual([
      [
        "small_test_part",
        "the test part holds 5 patients (per class: 'pos' 1, 'neg' 4): the test metrics rest on them alone, so read their intervals, and more patients give figures to rely on",
      ],
    ]);
    expect(warned(patients(200, ["a", "b", "b", "b"]))).toEqual([]); // 7 of 'a' and 23 of 'b' in test
    expect(warned(patients(60, ["a", "b"]), true)).toEqual([
      ["small_test_part", expect.stringContaining("the test part holds 10 patients:")],
    ]);
    expect(warned(patients(200, ["a", "b"]), true)).toEqual([]);
  });

  it("all_test and the disjointness check", () => {
    expect(allTest(["b", "a", "a"], 1)).toEqual({ seed: 1, train: [], val: [], test: ["a", "b"] });
    expect(() => assertDisjoint({ seed: 1, train: ["a"], val: [], test: ["a"] })).toThrow(/both train and test/);
  });
});

describe("zip_gcloud and problem kind", () => {
  it("accepts the caller's own path, hides others' (404), refuses bad ones (400)", () => {
    expect(resolveZipPath("u1/exp/d.zip", "u1")).toBe("u1/exp/d.zip");
    expect(resolveZipPath("gs://bucket/u1/exp/d.zip", "u1")).toBe("u1/exp/d.zip");
    expect(() => resolveZipPath("u2/exp/d.zip", "u1")).toThrow(expect.objectContaining({ status: 404 }));
    for (const bad of ["u1/../d.zip", "/u1/exp/d.zip", "u1//d.zip", "u1/exp/d.csv", "u1/d.zip", "u1/e x/d.zip"]) {
      expect(() => resolveZipPath(bad, "u1")).toThrow(expect.objectContaining({ status: 400 }));
    }
  });

  it("maps the request to the pipeline problem", () => {
    const base: DatasetTask = {
      family: "classification",
      inputs: "images",
      label_cols: ["y"],
      images_col: null,
      data_cols: [],
      split_col: null,
    };
    expect(problemOf(base, 2)).toBe("binary");
    expect(problemOf(base, 3)).toBe("multiclass");
    expect(problemOf({ ...base, label_cols: ["a", "b"] }, 2)).toBe("multilabel");
    expect(problemOf({ ...base, family: "regression" }, 40)).toBe("regression");
    expect(problemOf({ ...base, family: "detection" }, 3)).toBe("detection");
  });
});
