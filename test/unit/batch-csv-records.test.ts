import { parse } from "csv-parse/sync";
import { describe, expect, it } from "vitest";
import { CsvRowSplitter, type CsvRecord } from "../../src/batches/csv-records.js";
import { ApiError } from "../../src/errors.js";

// The batch tables' CSV reader (issue 48, findings 5 and 14): the rows csv-parse reads (the library the reader
// replaced, as an oracle) however the file is cut into pieces, each with the line it starts on; a row past the cap
// and a broken quote refused with the line (and column) named.

function readAll(text: string, pieces: string[] = [text], max = 1 << 20): CsvRecord[] {
  const s = new CsvRowSplitter(max);
  const out: CsvRecord[] = [];
  for (const p of pieces) out.push(...s.feed(p));
  out.push(...s.end());
  void text;
  return out;
}

const oracle = (text: string) =>
  parse(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true }) as string[][];

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return (err as ApiError).message;
  }
  throw new Error("not refused");
};

const SAMPLES = [
  "patient_id,age,sex\nP1,40,F\nP2,51,M\n",
  "\ufeffpatient_id,age\r\nP1,40\r\n\r\nP2,41",
  'id,note\n"P,1","say ""hi"""\nP2,"two\nlines"\nP3, spaced ,\n',
  'id,height\nP1,5\'11"\nP2,nor"th\n',
  "a,b\rP1,2\rP2,3\r",
  'a,b\n"x" ,  "y"  \n,\n\n   \nlast,"q"',
];

describe("CsvRowSplitter", () => {
  it("reads what csv-parse reads, in one piece, in two pieces cut anywhere, and one character at a time", () => {
    for (const text of SAMPLES) {
      const expected = oracle(text);
      expect(readAll(text).map((r) => r.values)).toEqual(expected);
      for (let cut = 0; cut <= text.length; cut++)
        expect(
          readAll(text, [text.slice(0, cut), text.slice(cut)]).map((r) => r.values),
          JSON.stringify([text, cut]),
        ).toEqual(expected);
      expect(readAll(text, [...text]).map((r) => r.values)).toEqual(expected);
    }
  });

  it("numbers each row by the line it starts on, as an editor does", () => {
    const text = 'id,v\n\nP1,1\nP2,"a\nb\r\nc"\nP3,3\r\nP4,4\rP5,5';
    expect(readAll(text).map((r) => [r.values[0], r.line])).toEqual([
      ["id", 1],
      ["P1", 3],
      ["P2", 4],
      ["P3", 7],
      ["P4", 8],
      ["P5", 9],
    ]);
    expect(readAll(text, [...text]).map((r) => r.line)).toEqual([1, 3, 4, 7, 8, 9]);
  });

  it("stops a row past the cap at the cap, naming its line, whatever the row is made of", () => {
    for (const long of ["7".repeat(5000), ",".repeat(5000), '"",'.repeat(2000), `"${"x\n".repeat(3000)}"`]) {
      const s = new CsvRowSplitter(1000);
      s.feed("id,age\nP1,40\n");
      const message = refusal(() => {
        for (let i = 0; i < long.length; i += 100) s.feed(long.slice(i, i + 100));
        s.end();
      });
      expect(message).toMatch(
        /^(the row on line 3 is longer than 1000 bytes|line 3 opens a value with a quote \("\) that does not close within 1000 bytes)/,
      );
    }
  });

  it("names the line of a quote that never closes, and the line and column of text after a closing quote", () => {
    expect(refusal(() => readAll('id,age,sex\nP1,40,F\nP2,"41,M\nP3,42,F\n'))).toBe(
      'line 3 opens a value with a quote (") that never closes, so the rest of the file would be read as that one value: close the quote, or remove it',
    );
    expect(refusal(() => readAll('id,age,sex\nP1,"4"0,F\n'))).toBe(
      "line 2, column 2 (“age”): a quoted value has more text after its closing quote; put the whole value inside the quotes",
    );
  });
});
