import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DATA_PROBLEMS, DATA_PROBLEMS_FILE } from "../../src/contract/data-problems.js";
import { LOCALES_DIR } from "../../src/i18n/index.js";
import { placeholdersOf } from "../../src/i18n/catalog-keys.js";

// Every data problem a pipeline can stop on is a key of pipelines/contract/data-problems.json (the one list: the
// pipelines' own test, pipelines/tests/test_data_problems.py, checks every DataError in the Python sources against
// it). Here: each key has its message in both languages under problems:pipeline.<key>, naming exactly the values
// the contract lists, so a Spanish reader never gets a key, an English sentence or an unfilled {{value}}.

const pipelineMessages = (lng: string) =>
  (JSON.parse(fs.readFileSync(path.join(LOCALES_DIR, lng, "problems.json"), "utf8")) as { pipeline: Record<string, string> }).pipeline;

describe("the pipelines' data problems in the catalog", () => {
  it("reads the contract's list (the check can fail)", () => {
    expect(path.basename(DATA_PROBLEMS_FILE)).toBe("data-problems.json");
    expect(Object.keys(DATA_PROBLEMS).length).toBeGreaterThan(40);
    expect(DATA_PROBLEMS.empty_value).toEqual(["column", "row"]);
  });

  for (const lng of ["en", "es"]) {
    it(`${lng}: every key the pipelines can emit, with the same values, and no message the pipelines cannot emit`, () => {
      const messages = pipelineMessages(lng);
      const wrong: string[] = [];
      for (const [key, values] of Object.entries(DATA_PROBLEMS)) {
        const message = messages[key];
        if (!message?.trim()) wrong.push(`${key}: no message`);
        else if (placeholdersOf(message).join(",") !== [...values].sort().join(","))
          wrong.push(`${key}: names {${placeholdersOf(message).join(", ")}}, the contract {${[...values].sort().join(", ")}}`);
      }
      for (const key of Object.keys(messages)) if (!Object.hasOwn(DATA_PROBLEMS, key)) wrong.push(`${key}: not in the contract`);
      expect(wrong).toEqual([]);
    });
  }

  it("says each problem differently in Spanish (none left in English)", () => {
    const en = pipelineMessages("en");
    const es = pipelineMessages("es");
    expect(Object.keys(DATA_PROBLEMS).filter((k) => en[k] === es[k])).toEqual([]);
  });
});
