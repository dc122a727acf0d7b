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
});
