import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { catalog, flatten, placeholders } from "../../src/i18n/strict.js";
import { parseGlossary } from "../../src/chat/glossary.js";
import { readDocs } from "../../src/chat/docs.js";

// The builtin chat's replies come from locales/<lang>/chat-replies.json (issue 53): every key a reply names in the
// code is in both languages, every value the code passes is one the message names, and no reply is written as an
// inline English/Spanish pair again. The chat's integration tests render the replies themselves; this covers the
// branches they do not reach.

const SRC = path.resolve(import.meta.dirname, "../../src/chat");
const files = fs
  .readdirSync(SRC, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => path.join(SRC, f));
const en = flatten(catalog("en", "chat-replies"));
const es = flatten(catalog("es", "chat-replies"));
const forms = (cat: Map<string, string>, key: string) =>
  [cat.get(key), cat.get(`${key}_one`), cat.get(`${key}_other`)].filter((m) => m !== undefined);

/** reply(lang, "group.key", { a, b: x }) with a literal key: the key and the names of the values given. */
function replyCalls(text: string): Array<{ key: string; values: string[] | null }> {
  const out: Array<{ key: string; values: string[] | null }> = [];
  for (const m of text.matchAll(/\breply\([^,()]+,\s*"([\w.]+)"(\s*,\s*\{([^{}]*)\})?\s*\)/g))
    out.push({
      key: m[1],
      values:
        m[3] === undefined
          ? []
          : m[3].includes("(") || m[3].includes("`")
            ? null
            : m[3]
                .split(",")
                .map((v) => v.split(":")[0].trim())
                .filter(Boolean),
    });
  return out;
}

describe("the chat's reply catalog", () => {
  const calls = files.flatMap((f) => replyCalls(fs.readFileSync(f, "utf8")).map((c) => ({ ...c, file: path.basename(f) })));

  it("is found in the code (the scan itself works)", () => {
    expect(calls.length).toBeGreaterThan(100);
  });

  it("has every key the code names, in English and Spanish", () => {
    const missing = calls.filter((c) => !forms(en, c.key).length || !forms(es, c.key).length).map((c) => `${c.file}: ${c.key}`);
    expect(missing).toEqual([]);
  });

  it("is given exactly the values each message names, where the call lists them plainly", () => {
    const wrong = calls
      .filter((c) => c.values !== null)
      .filter((c) => {
        const named = new Set([...forms(en, c.key), ...forms(es, c.key)].flatMap(placeholders));
        const given = new Set(c.values);
        if ([...forms(en, c.key)].length > 1) given.add("count");
        return [...named].some((n) => !given.has(n)) || [...given].some((v) => !named.has(v) && v !== "count");
      })
      .map((c) => `${c.file}: ${c.key} given [${c.values!.join(", ")}]`);
    expect(wrong).toEqual([]);
  });

  it("has no reply written as an inline pair of languages", () => {
    const inline = files.filter((f) => /\bsay\(\s*\w+\s*,\s*["'`]/.test(fs.readFileSync(f, "utf8"))).map((f) => path.basename(f));
    expect(inline).toEqual([]);
  });

  it("has no sentence chosen by the name of a language in the code (only the matcher tells languages apart)", () => {
    const branching = files
      .filter((f) => !f.includes(`${path.sep}matcher${path.sep}`) && !f.endsWith("language.ts"))
      .filter((f) => /[!=]==?\s*"(en|es)"|"(en|es)"\s*[!=]==?/.test(fs.readFileSync(f, "utf8")))
      .map((f) => path.basename(f));
    expect(branching).toEqual([]);
  });

  it("repeats the documentation's English meanings word for word (the docs stay the source of truth)", () => {
    const glossary = parseGlossary(readDocs());
    const differ = [...en]
      .filter(([k]) => k.startsWith("metricMeaning.") || (k.startsWith("codeMeaning.") && k !== "codeMeaning.fromDocs"))
      .filter(([k, v]) => {
        const [group, name] = k.split(".");
        const documented = group === "metricMeaning" ? glossary.metrics.get(name)?.meaning : glossary.codes.get(name)?.meaning;
        return documented !== v;
      })
      .map(([k]) => k);
    expect(en.has("metricMeaning.auc")).toBe(true);
    expect(differ).toEqual([]);
  });
});
