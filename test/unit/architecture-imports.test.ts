import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The layering rules of src/, checked on the real import statements (type-only imports included: a type
// import from a higher floor is the same coupling, it only disappears at run time).
const SRC = resolve(import.meta.dirname, "../../src");
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** src-relative file -> src-relative files it imports (relative specifiers only; .js resolves to .ts). */
export function importGraph(root = SRC): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, "utf8");
    // "./page.js" is page.ts or, for a React view (src/reports), page.tsx.
    const targets = [...text.matchAll(IMPORT)].map((m) => {
      const target = resolve(dirname(file), m[1]!.replace(/\.m?js$/, ".ts"));
      return relative(root, existsSync(target) || !existsSync(`${target}x`) ? target : `${target}x`);
    });
    graph.set(relative(root, file), targets);
  }
  return graph;
}

/** Every strongly connected group of more than one file (or a file importing itself): Tarjan's algorithm. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) groups.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return groups;
}

describe("src import layering", () => {
  const graph = importGraph();

  it("reads the real tree (guards the checks below against an empty graph)", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("server.ts")).toContain("http/app.ts");
    expect(graph.get("reports/model-card/page.tsx")).toContain("reports/model-card/sections-data.tsx");
  });

  it("has no import circles", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it("finds a circle when there is one (the checker itself can fail)", () => {
    const circular = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(importCycles(circular)).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  it("no folder below http/ imports from it (auth, chat, datasets, experiments, serving, net, jobs, cli, ...)", () => {
    // Only the entry points at the root (server.ts, services.ts for the metrics registry) may reach into http/.
    const upward = [...graph].flatMap(([file, targets]) =>
      file.includes("/") && !file.startsWith("http/") ? targets.filter((t) => t.startsWith("http/")).map((t) => `${file} -> ${t}`) : [],
    );
    expect(upward).toEqual([]);
  });

  it("nothing in src/ imports from test/ (the JavaScript oracles of test/oracles/ are the tests' alone)", () => {
    const intoTests = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => t.startsWith("../test/")).map((t) => `${file} -> ${t}`),
    );
    expect(intoTests).toEqual([]);
  });
});

/** Functions (declarations, methods, arrows) longer than maxLines in one file, as "name (N lines)". */
export function longFunctions(file: string, maxLines: number): string[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const lines =
        source.getLineAndCharacterOfPosition(node.end).line - source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const name =
        (node as ts.FunctionDeclaration).name?.getText(source) ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : "(anonymous)");
      if (lines > maxLines) found.push(`${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("src/jobs stays made of small parts", () => {
  it("has no function over 80 lines (the job is a list of stages, not one closure)", () => {
    const long = sourceFiles(join(SRC, "jobs")).flatMap((f) => longFunctions(f, 80).map((x) => `${relative(SRC, f)}: ${x}`));
    expect(long).toEqual([]);
  });

  it("measures what it claims to (a 90-line function is found)", () => {
    const dir = mkdtempSync(join(tmpdir(), "long-fn-"));
    const file = join(dir, "long.ts");
    writeFileSync(file, `export const f = () => {\n${"  work();\n".repeat(88)}};\n`);
    expect(longFunctions(file, 80)).toEqual(["f (90 lines)"]);
  });
});
