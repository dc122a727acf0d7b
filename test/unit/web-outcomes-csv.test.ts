import { describe, expect, it } from "vitest";
import { csvRows, OutcomesCsvError, parseOutcomesCsv } from "../../web/src/lib/outcomes-csv";

// The Monitoring tab's outcome upload (web/src/lib/outcomes-csv.ts): the two columns found by name, a spreadsheet's
// semicolons and byte-order mark, quoted fields, and every bad file refused with the row or column named before
// anything is sent.

describe("outcomes CSV", () => {
  it("reads request_id and label by name, in any order, with other columns ignored", () => {
    expect(parseOutcomesCsv("patient,label,request_id\np1,1,abc\np2,0,def\n")).toEqual([
      { request_id: "abc", label: "1" },
      { request_id: "def", label: "0" },
    ]);
  });

  it("takes a Spanish spreadsheet's export: BOM, semicolons, CRLF, Spanish header names, quoted values", () => {
    const text = '\ufeffid_solicitud;resultado\r\n"a;1";"maligno"\r\n"b""2";benigno\r\n\r\n';
    expect(parseOutcomesCsv(text)).toEqual([
      { request_id: "a;1", label: "maligno" },
      { request_id: 'b"2', label: "benigno" },
    ]);
  });

  it("names what is wrong", () => {
    expect(() => parseOutcomesCsv("")).toThrow(OutcomesCsvError);
    expect(() => parseOutcomesCsv("id,diagnosis\n1,0")).toThrow(/request_id and label.*id,diagnosis/);
    expect(() => parseOutcomesCsv("request_id,label\nabc,1\n,0")).toThrow("Row 3: request_id is empty.");
    expect(() => parseOutcomesCsv("request_id,label\nabc,")).toThrow("Row 2: label is empty.");
    expect(() => parseOutcomesCsv("request_id,label\n")).toThrow(/no outcomes/);
  });

  it("splits rows linearly: a long unterminated quote is one field, not a stall", () => {
    const long = `request_id,label\n"${"x".repeat(200_000)}`;
    const t0 = performance.now();
    expect(csvRows(long, ",")).toHaveLength(2);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
