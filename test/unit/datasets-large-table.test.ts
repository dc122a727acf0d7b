import { describe, expect, it } from "vitest";
import { MAX_TABLE_ROWS, parseCsvText } from "../../src/datasets/csv.js";
import { DatasetFault, ReportBuilder } from "../../src/datasets/report.js";
import { splitPatients } from "../../src/datasets/split.js";
import { say } from "../../src/errors.js";

// Issue 48 finding 8: a 400,000-row table failed with "Maximum call stack size exceeded" (the split spread a
// stratum's ids as call arguments). Large tables now split; past MAX_TABLE_ROWS they are refused, the limit named in
// English and Spanish, and the parser stops reading there.

describe("large tables", () => {
  it("splits 400,000 patients: every one in exactly one part, in the usual proportions", () => {
    const patients = new Map<string, string>();
    for (let i = 0; i < 400_000; i++) patients.set(`P${i}`, i % 3 === 0 ? "1" : "0");
    const split = splitPatients(patients, 7);
    expect(split.train.length + split.val.length + split.test.length).toBe(400_000);
    expect(new Set([...split.train, ...split.val, ...split.test]).size).toBe(400_000);
    expect(split.test.length).toBe(60_000);
    expect(split.val.length).toBe(60_000);
  });

  it(`refuses a table of more than ${MAX_TABLE_ROWS} rows, naming the limit in English and Spanish`, () => {
    const rows = "a,0\n".repeat(MAX_TABLE_ROWS + 1);
    let fault: unknown;
    try {
      parseCsvText(Buffer.from(`id,y\n${rows}`), new ReportBuilder(), "big.csv");
    } catch (err) {
      fault = err;
    }
    expect(fault).toBeInstanceOf(DatasetFault);
    expect((fault as DatasetFault).code).toBe("csv_too_many_rows");
    const message = (fault as DatasetFault).message;
    expect(message).toContain("big.csv has more than 1,000,000 data rows");
    expect(message).toContain("table row limit");
    expect(say((fault as DatasetFault).text!, "es")).toContain("big.csv tiene más de 1,000,000 filas de datos");
  });

  it("reads a table of exactly the limit (a smaller limit here, to stay fast) and refuses one row more", () => {
    const table = parseCsvText(Buffer.from(`id,y\n${"a,0\n".repeat(1000)}`), new ReportBuilder(), "t.csv", 1000);
    expect(table.rows.length).toBe(1000);
    expect(() => parseCsvText(Buffer.from(`id,y\n${"a,0\n".repeat(1001)}`), new ReportBuilder(), "t.csv", 1000)).toThrow(
      /more than 1,000 data rows/,
    );
  });
});
