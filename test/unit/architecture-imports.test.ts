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

/** A repository file: `repository.ts`, `<thing>.repository.ts` or `<thing>-repository.ts`. */
export function isRepository(file: string): boolean {
  return /(^|\/|[.-])repository\.ts$/.test(file);
}

/**
 * Imports of the table definitions (db/schema.ts) from anything but a repository or db/ itself (the client that
 * opens it): services call repositories, only repositories touch the tables. As "file -> db/schema.ts".
 */
export function schemaImportViolations(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, targets]) =>
    targets.includes("db/schema.ts") && !file.startsWith("db/") && !isRepository(file) ? [`${file} -> db/schema.ts`] : [],
  );
}

/** Imports of a repository from http/ (values or types): routes call services, and services call repositories. */
export function routeRepositoryImports(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, targets]) =>
    file.startsWith("http/") ? targets.filter(isRepository).map((t) => `${file} -> ${t}`) : [],
  );
}

const WRITE = /\b(?:insert|update|delete)\(\s*([A-Za-z]+)\s*\)/g;

/**
 * Tables written (insert, update, delete) from more than one file, as "table: file, file": each table has one owner.
 * `sources` maps a src-relative file to its text; the tables are the schema's exports.
 */
export function tablesWithManyWriters(sources: Map<string, string>, tables: ReadonlySet<string>): string[] {
  const writers = new Map<string, Set<string>>();
  for (const [file, text] of sources)
    for (const m of text.matchAll(WRITE)) if (tables.has(m[1]!)) writers.set(m[1]!, (writers.get(m[1]!) ?? new Set()).add(file));
  return [...writers].filter(([, files]) => files.size > 1).map(([table, files]) => `${table}: ${[...files].sort().join(", ")}`);
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

  it("only repositories import the table definitions (db/schema.ts)", () => {
    expect(schemaImportViolations(graph)).toEqual([]);
  });

  it("finds a service that imports the schema (the rule itself can fail)", () => {
    const planted = new Map([
      ["db/client.ts", ["db/schema.ts"]],
      ["auth/user.repository.ts", ["db/schema.ts", "db/client.ts"]],
      ["batches/repository.ts", ["db/schema.ts"]],
      ["serving/model-repository.ts", ["db/schema.ts"]],
      ["auth/user.service.ts", ["auth/user.repository.ts", "db/schema.ts"]],
      ["http/routes/users.ts", ["db/schema.ts"]],
      ["auth/repository-helpers.ts", ["db/schema.ts"]],
    ]);
    expect(schemaImportViolations(planted)).toEqual([
      "auth/user.service.ts -> db/schema.ts",
      "http/routes/users.ts -> db/schema.ts",
      "auth/repository-helpers.ts -> db/schema.ts",
    ]);
  });

  it("each table is written from one file (its repository)", () => {
    const tables = new Set(
      [...readFileSync(join(SRC, "db/schema.ts"), "utf8").matchAll(/export const (\w+) = pgTable\(/g)].map((m) => m[1]!),
    );
    expect(tables.size).toBeGreaterThan(15);
    const sources = new Map(sourceFiles(SRC).map((f) => [relative(SRC, f), readFileSync(f, "utf8")]));
    expect(tablesWithManyWriters(sources, tables)).toEqual([]);
  });

  it("finds a table written from two files (the check itself can fail)", () => {
    const planted = new Map([
      ["auth/session.repository.ts", "await this.db.delete(sessions).where(x); await tx.insert(sessions).values(v);"],
      ["auth/admin.service.ts", "await tx.delete( sessions ).where(eq(sessions.userId, id)); list.delete(key);"],
      ["auth/user.repository.ts", "await this.db.update(users).set(change);"],
    ]);
    expect(tablesWithManyWriters(planted, new Set(["sessions", "users"]))).toEqual([
      "sessions: auth/admin.service.ts, auth/session.repository.ts",
    ]);
  });

  it("no route imports a repository (routes call services)", () => {
    expect(routeRepositoryImports(graph)).toEqual([]);
  });

  it("finds a route that reaches into a repository (the rule itself can fail)", () => {
    const planted = new Map([
      ["http/routes/reports.ts", ["experiments/service.ts", "experiments/repository.ts"]],
      ["http/routes/admin.ts", ["auth/admin.service.ts"]],
      ["services.ts", ["experiments/repository.ts"]],
    ]);
    expect(routeRepositoryImports(planted)).toEqual(["http/routes/reports.ts -> experiments/repository.ts"]);
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
