import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { METRIC_NAMES } from "../../src/contract/types.js";
import { chunkMarkdown, readDocs, REPO_ROOT } from "../../src/chat/docs.js";
import { findMetric, parseGlossary } from "../../src/chat/glossary.js";

// The assistant explains metrics and codes from the documentation's own tables. These tests hold the docs to the
// code: every code the dataset checks can emit, and every metric the contract names, has an entry.

const glossary = parseGlossary(readDocs());

/** Every problem code emitted by src/datasets: report.error("code", ...) / report.warn("code", ...). */
function emittedCodes(): Map<string, "error" | "warn"> {
  const dir = path.join(REPO_ROOT, "src/datasets");
  const out = new Map<string, "error" | "warn">();
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    const text = fs.readFileSync(path.join(dir, f), "utf8");
    for (const m of text.matchAll(/\.(error|warn)\(\s*"([a-z][a-z0-9_]*)"/g)) out.set(m[2], m[1] as "error" | "warn");
    // Codes passed through a variable: report.error(code, ...) with the code from a literal list nearby.
    for (const m of text.matchAll(/"([a-z]+(?:_[a-z0-9]+)+)",\s*\n?\s*`/g)) out.set(m[1], out.get(m[1]) ?? "error");
  }
  return out;
}

describe("chat glossary parsed from the docs", () => {
  it("explains every problem code the dataset checks emit, with the right severity", () => {
    const emitted = emittedCodes();
    expect(emitted.size).toBeGreaterThan(30);
    const missing = [...emitted.keys()].filter((c) => !glossary.codes.has(c));
    expect(missing).toEqual([]);
    for (const [code, how] of emitted) {
      if (how === "warn") expect(glossary.codes.get(code)!.kind, code).toBe("dataset_warning");
    }
  });

  it("explains every contract metric, finds it by request name or a common alias, and splits grouped table rows", () => {
    expect(METRIC_NAMES.filter((m) => !glossary.metrics.has(m))).toEqual([]);
    expect(findMetric(glossary, "F-macro")?.name).toBe("f_macro");
    // Sensitivity is its own metric now (the positive class's, issue 37), no longer an alias of the macro recall.
    expect(findMetric(glossary, "sensitivity")?.name).toBe("sensitivity");
    expect(findMetric(glossary, "TPR")?.name).toBe("sensitivity");
    expect(findMetric(glossary, "AUROC")?.name).toBe("auc");
    expect(glossary.codes.get("csv_no_rows")?.meaning).toBe("header only");
    expect(glossary.codes.get("class_too_small")?.meaning).toMatch(/^a class with fewer than 3 patients/);
    // The problem-code table's verdict column: trivia fixed with a warning, the rest refuse the dataset.
    expect(glossary.codes.get("box_degenerate")?.kind).toBe("dataset_warning");
    expect(glossary.codes.get("duplicate_row")?.kind).toBe("dataset_warning");
    expect(glossary.codes.get("box_inverted")?.kind).toBe("dataset_error");
    expect(glossary.codes.get("rate_limit_exceeded")).toMatchObject({ kind: "api_error", status: 429 });
  });

  it("chunks markdown at headings, keeping code fences whole and the heading path", () => {
    const text = "# Top\n\nintro\n\n## Part A\n\nalpha\n\n```sh\n# not a heading\n```\n\n### Sub\n\nbeta\n\n## Part B\n\ngamma\n";
    const chunks = chunkMarkdown({ source: "docs/x.md", text });
    expect(chunks.map((c) => [c.heading, c.anchor])).toEqual([
      ["Top", "top"],
      ["Top › Part A", "part-a"],
      ["Top › Part A › Sub", "sub"],
      ["Top › Part B", "part-b"],
    ]);
    expect(chunks[1].body).toContain("# not a heading");
  });
});
