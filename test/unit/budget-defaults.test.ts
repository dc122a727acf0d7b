import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";

// One set of default training budgets: the server's defaults, the Python package's and the benchmarks' all come
// from pipelines/contract/budgets.json (they disagreed before: the tabular package said 20 s / 240 s, the server
// sent 150 s / 720 s).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const PYTHON = path.join(ROOT, "pipelines/.venv/bin/python");
const budgets = JSON.parse(fs.readFileSync(path.join(ROOT, "pipelines/contract/budgets.json"), "utf8"));

describe("default training budgets", () => {
  it("the server sends the contract's budgets when a request names none", () => {
    const cfg = parseConfig({});
    expect([cfg.FAST_BUDGET_S, cfg.BEST_BUDGET_S]).toEqual([budgets.fast, budgets.best]);
    expect(parseConfig({ FAST_BUDGET_S: "30" }).FAST_BUDGET_S).toBe(30);
  });

  it.skipIf(!fs.existsSync(PYTHON))("the tabular package (and bench/tabular through it) has the same", () => {
    const out = execFileSync(
      PYTHON,
      ["-c", "import json; from builder_pipelines.tabular import DEFAULT_BUDGET_S as d; print(json.dumps(d))"],
      {
        cwd: path.join(ROOT, "pipelines"),
        encoding: "utf8",
      },
    );
    expect(JSON.parse(out)).toEqual({ fast: budgets.fast, best: budgets.best });
  });
});
