import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { outOfRange, parsePastedRow, type InputColumn } from "../../web/src/lib/row-input";

// The Try-it form of a table model filled from a pasted CSV row, and the flag on values outside the training data
// (issue 38 item 5: a pasted row became one long number; glucose 999 and age -40 were scored without a word).

const cols: InputColumn[] = [
  { name: "Glucose", type: "numeric", min: 44, max: 199 },
  { name: "Age", type: "numeric", min: 21, max: 81 },
  { name: "sex", type: "categorical", categories: 2 },
];

describe("a pasted row", () => {
  it("one value is an ordinary paste (null), left to the browser", () => {
    expect(parsePastedRow("120", cols)).toBeNull();
    expect(parsePastedRow("  ", cols)).toBeNull();
  });

  it("comma, tab and semicolon rows fill the fields in order; a Spanish Excel's decimal comma is read", () => {
    expect(parsePastedRow("120,33,1", cols)).toEqual({ ok: true, values: ["120", "33", "1"] });
    expect(parsePastedRow("120\t33\t1\n", cols)).toEqual({ ok: true, values: ["120", "33", "1"] });
    expect(parsePastedRow("120,5;33;1", cols)).toEqual({ ok: true, values: ["120.5", "33", "1"] });
  });

  it("a header line and a row from the training CSV fill by name, whatever the order and extra columns", () => {
    const csv = 'patient_id,Outcome,age,Glucose,sex\n"P-17",1,45,"148",0';
    expect(parsePastedRow(csv, cols)).toEqual({ ok: true, values: ["148", "45", "0"] });
  });

  it("NA, ? and empty cells become empty fields (unknown)", () => {
    expect(parsePastedRow("NA,33,", cols)).toEqual({ ok: true, values: ["", "33", ""] });
    expect(parsePastedRow("?;33;1", cols)).toEqual({ ok: true, values: ["", "33", "1"] });
  });

  it("says why a row cannot be used, as a reason the form words in either language", () => {
    expect(parsePastedRow("1,2,3,4", cols)).toEqual({
      ok: false,
      problem: { kind: "wrongCount", count: 4, expected: 3, names: "Glucose, Age, sex" },
    });
    expect(parsePastedRow("a,b\n1,2", cols)).toEqual({ ok: false, problem: { kind: "headerMissing", columns: "“Glucose”, “Age”, “sex”" } });
    expect(parsePastedRow("Glucose,Age,sex\n1,2", cols)).toEqual({ ok: false, problem: { kind: "headerMismatch", header: 3, row: 2 } });
    expect(parsePastedRow("120,33,F", cols)).toEqual({ ok: false, problem: { kind: "notNumberCode", column: "sex", value: "F" } });
    expect(parsePastedRow("x,33,1", cols)).toEqual({ ok: false, problem: { kind: "notNumber", column: "Glucose", value: "x" } });
    expect(parsePastedRow("a,b\n1,2\n3,4", cols)).toEqual({ ok: false, problem: { kind: "tooManyLines", lines: 3 } });
  });

  it("words every reason from the catalog in English and Spanish, each value filled", () => {
    const catalog = (lng: string) =>
      JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, `../../locales/${lng}/tryit.json`), "utf8"));
    const samples = ["1,2,3,4", "a,b\n1,2", "Glucose,Age,sex\n1,2", "120,33,F", "x,33,1", "a,b\n1,2\n3,4"].map((text) => {
      const r = parsePastedRow(text, cols);
      if (!r || r.ok) throw new Error(`expected a problem for ${text}`);
      return r.problem;
    });
    expect(new Set(samples.map((p) => p.kind)).size).toBe(6);
    for (const lng of ["en", "es"]) {
      const words = catalog(lng).try.paste as Record<string, string>;
      for (const { kind, ...values } of samples) {
        const said = words[kind].replace(/\{\{(\w+)\}\}/g, (_, name: string) => String((values as Record<string, unknown>)[name]));
        expect(said, `${lng} ${kind}`).not.toMatch(/\{\{|undefined/);
      }
    }
    expect(catalog("es").try.paste.tooManyLines).toMatch(/^pegue una fila/);
  });
});

describe("values outside the training data", () => {
  it("flags numbers outside [min, max] and codes the model does not have; the edges and empty fields pass", () => {
    expect(outOfRange(cols[0], "999")).toEqual({ kind: "outsideRange", min: 44, max: 199 });
    expect(outOfRange(cols[1], "-40")).toEqual({ kind: "outsideRange", min: 21, max: 81 });
    expect(outOfRange(cols[0], "44")).toBeNull();
    expect(outOfRange(cols[0], "199")).toBeNull();
    expect(outOfRange(cols[0], "")).toBeNull();
    expect(outOfRange(cols[2], "2")).toEqual({ kind: "unknownCode", max: 1 });
    expect(outOfRange(cols[2], "0.5")).toEqual({ kind: "unknownCode", max: 1 });
    expect(outOfRange(cols[2], "1")).toBeNull();
    expect(outOfRange({ name: "x", type: "numeric" }, "1e9")).toBeNull(); // no range known: nothing claimed
  });
});
