import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { HeaderCharacterKind } from "../../src/datasets/header-characters.js";
import type { PathCharacterKind } from "../../src/datasets/images.js";
import { problem } from "../../src/datasets/report.js";
import type { SplitPart } from "../../src/datasets/split.js";
import { say } from "../../src/errors.js";
import { placeholdersOf } from "../../src/i18n/catalog-keys.js";
import { readCatalog, setMissingValueHook } from "../../src/i18n/index.js";

// Every dataset check words its problem with problem("dataset.<key>", { values }) (src/datasets/report.ts): this
// reads each such call in src/ and checks it against locales/{en,es}/problems.json — the key is there in both
// languages, the call gives exactly the values the message names (with those of a nested
// $t(problems:dataset.<group>.{{value}}), whose every choice is in both languages), and the Spanish said from it
// has no English left, no unfilled {{value}} and no unresolved $t(...). i18n-error-sites.test.ts fails a check
// raised with a sentence instead.

const SRC = resolve(import.meta.dirname, "../../src");
const catalog = readCatalog();
const dataset = (lng: "en" | "es") => (catalog[lng].problems as { dataset: Record<string, unknown> }).dataset;
const PLURAL = ["_one", "_other"];
const NESTED = /\$t\(problems:dataset\.(\w+)\.\{\{(\w+)\}\}\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

interface Call {
  at: string;
  key: string | null;
  /** The value names the call gives; null when they cannot be read from the source (not an object literal). */
  values: string[] | null;
}

/** The object literals a file assigns to a const, by name (a call may spread one: { ...box, used }). */
function constObjects(source: ts.SourceFile): Map<string, ts.ObjectLiteralExpression> {
  const out = new Map<string, ts.ObjectLiteralExpression>();
  const visit = (n: ts.Node): void => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && ts.isObjectLiteralExpression(n.initializer))
      out.set(n.name.text, n.initializer);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return out;
}

function valueNames(o: ts.ObjectLiteralExpression, consts: Map<string, ts.ObjectLiteralExpression>): string[] | null {
  const names: string[] = [];
  for (const p of o.properties) {
    if ((ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p)) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)))
      names.push(p.name.text);
    else if (ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression) && consts.has(p.expression.text)) {
      const inner = valueNames(consts.get(p.expression.text)!, consts);
      if (!inner) return null;
      names.push(...inner);
    } else return null;
  }
  return names.sort();
}

/** Every problem(...) call in a file's source. */
export function problemCalls(file: string, text: string): Call[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  // Only the dataset checks' problem() (another module may have a function of that name: src/config.ts).
  const imported = source.statements.some(
    (s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      /(^\.|datasets)\/report\.js$/.test(s.moduleSpecifier.text) &&
      !!s.importClause?.namedBindings &&
      ts.isNamedImports(s.importClause.namedBindings) &&
      s.importClause.namedBindings.elements.some((e) => e.name.text === "problem"),
  );
  if (!imported && !file.endsWith("datasets/report.ts") && file !== "planted.ts") return [];
  const consts = constObjects(source);
  const calls: Call[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "problem") {
      const [k, v] = n.arguments;
      const at = `${file}:${source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1}`;
      const key = k && ts.isStringLiteral(k) ? k.text : null;
      const values = v === undefined ? [] : ts.isObjectLiteralExpression(v) ? valueNames(v, consts) : null;
      calls.push({ at, key, values });
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return calls;
}

/** The message(s) of `key` ("dataset.x") in `lng`: itself, or its plural forms. */
function messagesOf(lng: "en" | "es", key: string): string[] {
  const name = key.slice("dataset.".length);
  const d = dataset(lng);
  if (typeof d[name] === "string") return [d[name]];
  return PLURAL.map((p) => d[name + p]).filter((m): m is string => typeof m === "string");
}

/** The values a message needs: its own, those of every choice of a nested group, and count for a plural. */
function needed(lng: "en" | "es", key: string): string[] | null {
  const messages = messagesOf(lng, key);
  if (messages.length === 0) return null;
  const names = new Set<string>();
  const name = key.slice("dataset.".length);
  if (!(name in dataset(lng))) names.add("count");
  for (const m of messages) {
    for (const p of placeholdersOf(m)) names.add(p);
    for (const [, group] of m.matchAll(NESTED)) {
      for (const choice of Object.values(dataset(lng)[group] as Record<string, string>))
        for (const p of placeholdersOf(choice)) names.add(p);
    }
  }
  return [...names].sort();
}

/** A made-up value for each name (numbers where a plural picks its form). */
const sample = (names: string[]) => Object.fromEntries(names.map((n) => [n, n === "count" ? 3 : `<${n}>`]));

const calls = sourceFiles(SRC).flatMap((f) => problemCalls(relative(SRC, f), readFileSync(f, "utf8")));

describe("dataset checks' words in the catalog (problems:dataset.*)", () => {
  it("finds the calls (the scan can fail)", () => {
    expect(calls.length).toBeGreaterThan(80);
    expect(calls.map((c) => c.key)).toContain("dataset.class_too_small");
    expect(problemCalls("planted.ts", 'problem(key, { a });\nproblem("dataset.x", values);\nproblem("dataset.y", { ...rest });')).toEqual([
      { at: "planted.ts:1", key: null, values: ["a"] },
      { at: "planted.ts:2", key: "dataset.x", values: null },
      { at: "planted.ts:3", key: "dataset.y", values: null },
    ]);
  });

  for (const lng of ["en", "es"] as const) {
    it(`${lng}: every key a check raises is there, and the check gives exactly the values its message names`, () => {
      const wrong: string[] = [];
      for (const c of calls) {
        if (!c.key) wrong.push(`${c.at}: the key is not a literal`);
        else if (c.values === null) wrong.push(`${c.at}: the values are not an object literal`);
        else {
          const want = needed(lng, c.key);
          if (!want) wrong.push(`${c.at}: ${c.key} is not in locales/${lng}/problems.json`);
          else if (want.join(",") !== c.values.join(","))
            wrong.push(`${c.at}: ${c.key} names {${want.join(", ")}}, the check gives {${c.values.join(", ")}}`);
        }
      }
      expect(wrong).toEqual([]);
    });
  }

  it("has no message no check raises (each nested group's choices excepted)", () => {
    const used = new Set(calls.map((c) => c.key?.slice("dataset.".length)));
    const groups = new Set<string>();
    for (const m of Object.values(dataset("en"))) if (typeof m === "string") for (const [, g] of m.matchAll(NESTED)) groups.add(g);
    const unused = Object.keys(dataset("en")).filter((k) => !groups.has(k) && !used.has(k.replace(/_(one|other)$/, "")));
    expect(unused).toEqual([]);
  });

  it("has a choice in both languages for every value a nested group is chosen by", () => {
    // satisfies: the compiler keeps these lists equal to the types the checks choose from.
    const choices: Record<string, string[]> = {
      path_character: Object.keys({
        space: 1,
        tab: 1,
        backslash: 1,
        symbol: 1,
        comma: 1,
        semicolon: 1,
        quote: 1,
        other: 1,
      } satisfies Record<PathCharacterKind, 1>),
      header_character: Object.keys({ line_break: 1, tab: 1, control: 1, direction: 1, invisible: 1 } satisfies Record<
        HeaderCharacterKind,
        1
      >),
      split_part: Object.keys({ train: 1, val: 1, test: 1 } satisfies Record<SplitPart, 1>),
      column_role: ["label", "data", "images", "split", "subgroup", "detection"],
    };
    for (const lng of ["en", "es"] as const)
      for (const [group, keys] of Object.entries(choices))
        expect(Object.keys(dataset(lng)[group] as object).sort(), `${lng}:${group}`).toEqual(keys.sort());
  });

  it("says every raised message in Spanish with each value filled and each nested choice resolved, and none is the English", () => {
    const missing: string[] = [];
    setMissingValueHook((key, name) => missing.push(`${key}: ${name}`));
    try {
      const wrong: string[] = [];
      for (const c of calls) {
        if (!c.key || !c.values) continue;
        const values = sample(c.values);
        for (const v of ["kind", "role", "part", "first", "other"]) if (v in values) values[v] = firstChoice(c.key, v);
        const es = say(problem(c.key as `dataset.${string}`, values), "es");
        const en = say(problem(c.key as `dataset.${string}`, values), "en");
        if (es === en || /\{\{|\$t\(|problems:/.test(es)) wrong.push(`${c.at}: ${es}`);
      }
      expect(wrong).toEqual([]);
      expect(missing).toEqual([]);
    } finally {
      setMissingValueHook(() => {});
    }
  });
});

/** A real choice of the group a nested value picks in `key`'s English message. */
function firstChoice(key: string, value: string): string {
  for (const m of messagesOf("en", key))
    for (const [, group, v] of m.matchAll(NESTED)) if (v === value) return Object.keys(dataset("en")[group] as object)[0];
  return `<${value}>`;
}
