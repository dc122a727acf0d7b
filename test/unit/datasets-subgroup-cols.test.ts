import { describe, expect, it } from "vitest";
import { parseCsvText } from "../../src/datasets/csv.js";
import { ReportBuilder } from "../../src/datasets/report.js";
import { checkTable, SUBGROUP_FREE_TEXT_DISTINCT } from "../../src/datasets/table-checks.js";
import type { DatasetTask } from "../../src/datasets/types.js";

// subgroup_cols in the dataset checks (issue 37 item 5): each must be in the CSV, a feature or not; a free-text-like
// one is warned about (the pipeline leaves it out); numbers with decimal commas are normalised like features.

const task = (subgroup_cols: string[]): DatasetTask => ({
  family: "classification",
  inputs: "table",
  label_cols: ["y"],
  images_col: null,
  data_cols: ["age"],
  split_col: null,
  subgroup_cols,
});

function check(csv: string, cols: string[]) {
  const report = new ReportBuilder();
  const table = parseCsvText(Buffer.from(csv), report, "data.csv");
  const checked = checkTable(table, { report, csvPath: "data.csv", task: task(cols), willSplit: false });
  return { report, checked, table };
}

const rows = (n: number, site: (i: number) => string) =>
  ["id;y;age;site;bmi", ...Array.from({ length: n }, (_, i) => `${i + 1};${i % 2};${30 + i};${site(i)};${20 + i},5`)].join("\n") + "\n";

describe("subgroup columns in the dataset checks", () => {
  it("a column the CSV lacks is refused as column_missing, naming it as a subgroup column", () => {
    const { report, checked } = check(
      rows(10, (i) => "AB"[i % 2]),
      ["site", "scanner"],
    );
    expect(checked).toBeNull();
    expect(report.errors.map((e) => [e.code, e.column])).toEqual([["column_missing", "scanner"]]);
    expect(report.errors[0].message).toMatch(/^the subgroup column 'scanner' is not in the CSV header/);
  });

  it("a feature may be a subgroup column too; the patient id may not", () => {
    expect(
      check(
        rows(10, (i) => "AB"[i % 2]),
        ["age", "site"],
      ).report.errors,
    ).toEqual([]);
    const { report } = check(
      rows(10, (i) => "AB"[i % 2]),
      ["id"],
    );
    expect(report.errors.map((e) => e.code)).toEqual(["column_role_conflict"]);
  });

  it("warns about a free-text-like column, and normalises a numeric one's decimal commas", () => {
    const n = SUBGROUP_FREE_TEXT_DISTINCT + 5;
    const { report, checked, table } = check(
      rows(n, (i) => `note ${i}`),
      ["site", "bmi"],
    );
    expect(report.errors).toEqual([]);
    expect(report.warnings.map((w) => [w.code, w.column])).toEqual([["subgroup_col_free_text", "site"]]);
    expect(checked!.numericData.has(table.header.indexOf("bmi"))).toBe(true);
    expect(
      check(
        rows(n, (i) => "ABC"[i % 3]),
        ["site"],
      ).report.warnings,
    ).toEqual([]);
  });
});
