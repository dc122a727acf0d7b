import fs from "node:fs";
import path from "node:path";
import { checkSync, type Diagnostics } from "recheck";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// Issue 42, finding 2: one chat message held the event loop for seconds, through a regex that backtracked. This
// test reads every regular expression literal in src/ (with the TypeScript parser, so a regex added later is
// checked too) and asks recheck (makenowjust's ReDoS checker) whether its matching time can grow faster than the
// input: "safe" means linear, "vulnerable" comes with an attack string. Its pure-JS checker runs here, offline, and
// with every time limit off and a fixed seed: the verdict depends on step counts only, never on this machine's speed.
//
// Only regexes that never see text from users may be exempt, each with the reason. Text from users: chat
// messages, CSV headers and cells, zip entry names and file contents (VOC XML), image URIs, request headers, ids
// and paths. `new RegExp` cannot be checked from its source: each site is listed with why its pattern is safe.

const ROOT = path.resolve(import.meta.dirname, "../..");

/** `file: /literal/flags` → why it never sees user text. */
const EXEMPT: Record<string, string> = {
  "src/chat/docs.ts: /<!--[\\s\\S]*?-->/g": "Builder's own documentation, read at start-up",
  "src/chat/docs.ts: /^(#{1,4})\\s+(.*)$/": "Builder's own documentation, read at start-up",
  "src/chat/glossary.ts: /Warnings[^:]*:([\\s\\S]*?)(?:\\n\\s*\\n|$)/": "Builder's own documentation, read at start-up",
  "src/chat/glossary.ts: /`([a-z][a-z0-9_]*)`\\s*\\(([^)]*(?:\\([^)]*\\)[^)]*)*)\\)/g": "Builder's own documentation, read at start-up",
  "src/chat/facts.ts: /\\/+$/": "PUBLIC_URL, the operator's configuration",
  "src/http/route.ts: /\\{([^}]+)\\}/g": "the route table's paths, written in code",
  "src/http/app.ts: /\\{[^}]+\\}/": "the route table's paths, written in code",
  "src/http/routes/reports.ts: /\\/+$/": "a model's store path, made by Builder",
  "src/serving/model-cache.ts: /\\/+$/": "a model's store path, made by Builder",
  "src/serving/model-catalog.ts: /\\/+$/": "a model's store path, made by Builder",
  "src/storage/gcs-bucket.ts: /\\/+$/": "list() prefixes, made by Builder (a model's store path)",
  "src/storage/local-bucket.ts: /\\/+$/": "list() prefixes, made by Builder (a model's store path)",
  "src/storage/s3-bucket.ts: /\\/+$/": "list() prefixes, made by Builder (a model's store path)",
};

/** Files with `new RegExp(...)` → why what it builds is safe. */
const DYNAMIC: Record<string, string> = {
  "src/http/app.ts": "allowedMethods: ^…$ over the route table's escaped literal paths joined by [^/]+; no nested or adjacent repetition",
};

interface Literal {
  key: string;
  where: string;
  source: string;
  flags: string;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

function scan(): { literals: Literal[]; dynamic: Set<string> } {
  const literals: Literal[] = [];
  const dynamic = new Set<string>();
  for (const file of sourceFiles(path.join(ROOT, "src"))) {
    const rel = path.relative(ROOT, file).split(path.sep).join("/");
    const sf = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const text = node.getText(sf);
        const slash = text.lastIndexOf("/");
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        literals.push({ key: `${rel}: ${text}`, where: `${rel}:${line}`, source: text.slice(1, slash), flags: text.slice(slash + 1) });
      }
      if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && node.expression.getText(sf) === "RegExp") dynamic.add(rel);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { literals, dynamic };
}

const { literals, dynamic } = scan();
const checked = literals.filter((l) => !(l.key in EXEMPT));

// Step limits only (every timeout null; recall validation, which the pure-JS checker lacks, stays off as by default)
// and a fixed seed for the fuzzer: the same verdict on any machine.
const deterministic = { randomSeed: 42, timeout: null, attackTimeout: null, incubationTimeout: null, seedingTimeout: null };
const verdict = (l: Literal): Diagnostics => checkSync(l.source, l.flags, deterministic);
const summary = (d: Diagnostics) =>
  d.status === "vulnerable"
    ? `vulnerable: ${d.complexity.summary}, attack ${d.attack.pattern}`
    : d.status === "unknown"
      ? `unknown: ${d.error.kind}`
      : "safe";

describe("every regex in src/ that sees user text runs in linear time", () => {
  it("finds the regexes (the scan itself works)", () => {
    expect(checked.length).toBeGreaterThan(80);
    expect(checked.map((l) => l.where)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^src\/chat\/safety\.ts:/),
        expect.stringMatching(/^src\/datasets\/csv\.ts:/),
        expect.stringMatching(/^src\/http\/app\.ts:/),
      ]),
    );
  });

  it("lists exactly the exemptions that still exist, and every file that builds a RegExp at run time", () => {
    // A stale exemption would silently cover a new regex written the same way in that file.
    expect(Object.keys(EXEMPT).filter((k) => !literals.some((l) => l.key === k))).toEqual([]);
    expect([...dynamic].sort()).toEqual(Object.keys(DYNAMIC).sort());
  });

  // The slowest verdicts (large alternations under /i) take some seconds of pure-JS checking: room for a busy machine.
  it.each(checked.map((l) => [l.where, l] as const))("%s", { timeout: 180_000 }, (_where, l) => {
    expect(`${l.key} → ${summary(verdict(l))}`).toBe(`${l.key} → safe`);
  });
});

describe("the recheck verdict is a real one", () => {
  it("calls the issue's pattern vulnerable, with an attack string, and a plain one safe", () => {
    const old = verdict({
      key: "",
      where: "",
      flags: "i",
      source: String.raw`\b(this|my|the|these|his|her|that) (image|scan|x-?rays?|ct|mri|slide|photo|radiograph|ecg|biopsy)\b.*\b(shows?|showing|indicates?|suggests?|reveals?|contains?)\b.*\b(pneumonia|cancer|tumou?r|malignan|fracture|disease|infection|lesion|melanoma|covid|nodule|abnormal)`,
    });
    expect(old.status).toBe("vulnerable");
    expect(verdict({ key: "", where: "", flags: "", source: "^[A-Za-z0-9._-]{1,128}$" }).status).toBe("safe");
  });
});

describe("rewritten patterns accept what they accepted", () => {
  it("CSV numbers: the unambiguous NUMBER takes the same strings as the old one", async () => {
    const { parseNumber } = await import("../../src/datasets/csv.js");
    const OLD = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
    const chars = ["0", "7", ".", "e", "E", "+", "-", ",", "x"];
    // Every string of up to 5 of these characters (66430 of them), as cells of a comma-delimited file.
    const strings = (n: number): string[] => (n === 0 ? [""] : strings(n - 1).flatMap((x) => chars.map((c) => x + c)));
    const differ = [0, 1, 2, 3, 4, 5].flatMap(strings).filter((x) => (parseNumber(x, ",") !== null) !== OLD.test(x.trim()));
    expect(differ).toEqual([]);
  });
});
