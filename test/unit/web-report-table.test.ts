import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { DatasetReport } from "../../web/src/api/types";
// The dashboard's strings (English: no browser language here), as main.tsx loads them.
import "../../web/src/i18n";
import { DatasetReportView, ProblemTable } from "../../web/src/components/DatasetReportView";
import { problemHeadline, problemRows } from "../../web/src/lib/problems";
import i18n from "i18next";
import { parseCsvText } from "../../src/datasets/csv.js";
import { ReportBuilder } from "../../src/datasets/report.js";
import { checkTable } from "../../src/datasets/table-checks.js";
import type { DatasetTask } from "../../src/datasets/types.js";

// The dataset report as the dashboard shows it: errors before warnings, grouped by code, in row order, each with
// its row, column, path and message; totals from problem_counts when the lists were capped.

const report: DatasetReport = {
  valid: false,
  errors: [
    { severity: "error", code: "label_missing", message: "row 9 has no value in the label column 'dx'", row: 9, column: "dx" },
    {
      severity: "error",
      code: "image_missing",
      message: "images/p3.png is not in the zip",
      row: 4,
      column: "image",
      path: "images/p3.png",
    },
    { severity: "error", code: "label_missing", message: "row 3 has no value in the label column 'dx'", row: 3, column: "dx" },
  ],
  warnings: [{ severity: "warning", code: "few_patients", message: "class 1 has 2 patients" }],
  errors_omitted: 40,
  warnings_omitted: 0,
  summary: {
    rows: 50,
    patients: 20,
    class_counts: { dx: { "0": 30, "1": 20 } },
    image_sizes: { width: { min: 64, max: 512 }, height: { min: 64, max: 400 }, channels: { "3": 50 } },
    problem_counts: { label_missing: 42 },
  },
};

describe("dataset report table", () => {
  it("orders errors before warnings, then by code and row, and carries each code's total", () => {
    const rows = problemRows(report);
    expect(rows.map((r) => [r.severity, r.code, r.row ?? null, r.total])).toEqual([
      ["error", "image_missing", 4, 1],
      ["error", "label_missing", 3, 42],
      ["error", "label_missing", 9, 42],
      ["warning", "few_patients", null, 1],
    ]);
  });

  it("the headline counts what was left out of the lists", () => {
    expect(problemHeadline(report)).toBe("43 errors, 1 warning (40 more not listed)");
    expect(problemHeadline({ errors: [], warnings: [], errors_omitted: 0, warnings_omitted: 0 })).toBe("0 errors, 0 warnings");
  });

  it("renders one table row per problem with row, column, path and message in their own cells", () => {
    const html = renderToStaticMarkup(createElement(ProblemTable, { report }));
    const rows = [...html.matchAll(/<tr class="sev-(\w+)">(.*?)<\/tr>/g)].map((m) => [
      m[1],
      [...m[2].matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1].replace(/<[^>]+>/g, "")),
    ]);
    expect(rows[0]).toEqual(["error", ["error", "4", "image", "images/p3.png", "images/p3.png is not in the zip", "image_missing"]]);
    expect(rows[1][1].slice(0, 3)).toEqual(["error", "3", "dx"]);
    expect(rows[1][1][5]).toBe("label_missing ×42");
    expect(rows[3]).toEqual(["warning", ["warning", "", "", "", "class 1 has 2 patients", "few_patients"]]);
  });

  it("the full view shows validity, class counts, patients and image sizes", () => {
    const html = renderToStaticMarkup(createElement(DatasetReportView, { report }));
    expect(html).toContain("The dataset has errors to fix before it can train.");
    expect(html).toContain("Class counts: dx");
    expect(html).toMatch(/<dt>Patients<\/dt><dd>20<\/dd>/);
    expect(html).toMatch(/<dt>Image widths<\/dt><dd>64–512 px<\/dd>/);
    expect(renderToStaticMarkup(createElement(ProblemTable, { report: { ...report, errors: [], warnings: [] } }))).toContain(
      "No problems found.",
    );
  });

  it("says the TypeScript checks' problems in Spanish from their keys, nested choices and plurals included, none marked English", async () => {
    const built = new ReportBuilder();
    const csv =
      "patient_id,image,dx\np1,images/p1.png,benigno\np2,images/p 2.png,benigno\np3,images/p3.png,benigno\np4,images/p4.png,maligno\n";
    const task: DatasetTask = {
      family: "classification",
      inputs: "images",
      label_cols: ["dx"],
      images_col: "image",
      data_cols: [],
      split_col: null,
    };
    const files = new Set(["images/p1.png", "images/p3.png", "images/p4.png"]);
    checkTable(parseCsvText(Buffer.from(csv), built, "data.csv"), {
      report: built,
      csvPath: "data.csv",
      task,
      files,
      top: null,
      willSplit: true,
    });
    // As the dashboard receives it: JSON.
    const checked = JSON.parse(JSON.stringify(built.build())) as DatasetReport;
    expect(checked.errors.map((p) => p.code).sort()).toEqual(["class_too_small", "image_not_found", "image_path_character"]);
    await i18n.changeLanguage("es");
    try {
      const html = renderToStaticMarkup(createElement(ProblemTable, { report: checked }));
      expect(html).not.toContain('lang="en"');
      expect(html).toContain("la imagen «images/p 2.png» (fila 3) no está en el zip");
      expect(html).toContain("la ruta de imagen «images/p 2.png» contiene un espacio en la posición 9");
      expect(html).toContain("la clase «maligno» de «dx» tiene 1 paciente; se necesitan al menos 3");
      expect(html).not.toMatch(/\$t\(|\{\{|problems:dataset/);
    } finally {
      await i18n.changeLanguage("en");
    }
  });
});
