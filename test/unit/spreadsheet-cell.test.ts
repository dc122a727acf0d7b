import { describe, expect, it } from "vitest";
import { spreadsheetCell } from "../../src/datasets/table-writer.js";

// The one cell writer of the CSVs people open in a spreadsheet (batch results.csv, the audit log's CSV).

describe("spreadsheetCell", () => {
  it("leaves plain text alone and quotes only what must be quoted", () => {
    expect(spreadsheetCell("P-0042")).toBe("P-0042");
    expect(spreadsheetCell("a, b")).toBe('"a, b"');
    expect(spreadsheetCell('say "hi"')).toBe('"say ""hi"""');
    expect(spreadsheetCell("two\nlines")).toBe('"two\nlines"');
  });

  it("writes text a spreadsheet would run as a formula with a leading quote, also inside a message", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"])
      expect(spreadsheetCell(`${start}HYPERLINK("x")`).startsWith(`"'${start}`)).toBe(true);
    // a CSV column named "=cmd()" reaches results.csv's error column at the start of the message
    expect(spreadsheetCell("=cmd(): not a number")).toBe("'=cmd(): not a number");
  });

  // Issue 48, finding 6: Excel in Spanish, German or French opens a .csv on ';', so an id "x;=1+1;" written as it is
  // became the cells "x", "=1+1" and "", and the formula ran.
  it("keeps text whole and inert whatever separator the spreadsheet's locale splits on", () => {
    expect(spreadsheetCell("x;=1+1;")).toBe(`"'x;=1+1;"`);
    for (const sep of [",", ";", "\t", "|", "\r", "\n"])
      for (const start of ["=", "+", "-", "@", " =", "\u00a0@"]) {
        const cell = spreadsheetCell(`P01${sep}${start}HYPERLINK("http://x")`);
        expect(cell.startsWith(`"'P01`), JSON.stringify([sep, start])).toBe(true);
        // under every separator, no part of what the spreadsheet reads begins a formula
        for (const s of [",", ";", "\t", "|"]) expect(readAs(cell, s).every((part) => !/^[ \u00a0]*[=+\-@\t\r]/.test(part))).toBe(true);
      }
    // a separator with no formula after it: quoted (kept whole), not prefixed
    expect(spreadsheetCell("Hospital; ala norte")).toBe('"Hospital; ala norte"');
    expect(spreadsheetCell("P-0042;7")).toBe('"P-0042;7"');
  });
});

/**
 * The cells a spreadsheet reads from one CSV cell with this separator: quotes honoured (RFC 4180, as Excel and
 * LibreOffice do whatever their separator), outside quotes split on the separator.
 */
function readAs(cell: string, sep: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < cell.length; i++) {
    const c = cell[i];
    if (quoted) {
      if (c === '"' && cell[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"' && cur === "") quoted = true;
    else if (c === sep) {
      out.push(cur);
      cur = "";
    } else cur += c;
  }
  out.push(cur);
  return out;
}
