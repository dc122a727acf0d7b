import { chunkMarkdown, type DocFile } from "./docs.js";

// What the assistant says a metric or an error/problem code means comes from the documentation's own tables,
// parsed here, so the README (or docs/) stays the one source of truth. test/unit/chat-glossary.test.ts checks that
// every code the dataset checks can emit and every contract metric has an entry.

export interface CodeEntry {
  code: string;
  meaning: string;
  /** dataset_error / dataset_warning: a problem in an uploaded dataset; api_error: an HTTP error code. */
  kind: "dataset_error" | "dataset_warning" | "api_error";
  status?: number;
  source: string;
  heading: string;
  anchor: string;
}

export interface MetricEntry {
  name: string;
  /** How requests name it (optimization_metric), when they can. */
  requestName?: string;
  meaning: string;
  source: string;
  heading: string;
  anchor: string;
}

export interface Glossary {
  codes: Map<string, CodeEntry>;
  metrics: Map<string, MetricEntry>;
  /** Every word the documentation uses at least twice (lower case): real words the spelling check must leave alone. */
  words: Set<string>;
}

const CODE = /`([a-z][a-z0-9_]*)`/g;
const codesIn = (cell: string) => [...cell.matchAll(CODE)].map((m) => m[1]);
const cells = (line: string) =>
  line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .map((c) => c.trim());
const isTableLine = (line: string) => line.trim().startsWith("|");
const isSeparator = (line: string) => /^\|?\s*:?-{2,}/.test(line.trim());

/** The tables of one chunk: header cells and row cells. */
function tables(body: string): Array<{ header: string[]; rows: string[][] }> {
  const out: Array<{ header: string[]; rows: string[][] }> = [];
  const lines = body.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!isTableLine(lines[i]) || !lines[i + 1] || !isSeparator(lines[i + 1])) continue;
    const header = cells(lines[i]).map((h) => h.toLowerCase());
    const rows: string[][] = [];
    for (i += 2; i < lines.length && isTableLine(lines[i]); i++) rows.push(cells(lines[i]));
    out.push({ header, rows });
  }
  return out;
}

/** "a; b; c" for three codes gives each its own part; otherwise every code gets the whole text. */
function meaningsFor(codes: string[], meaning: string): string[] {
  const parts = meaning.split(/;\s+/);
  return codes.map((_, i) => (parts.length === codes.length ? parts[i] : meaning));
}

export function parseGlossary(files: DocFile[]): Glossary {
  const glossary: Glossary = { codes: new Map(), metrics: new Map(), words: new Set() };
  const seen = new Map<string, number>();
  for (const file of files) {
    for (const w of file.text.toLowerCase().split(/[^a-z]+/)) if (w.length >= 3) seen.set(w, (seen.get(w) ?? 0) + 1);
    for (const chunk of chunkMarkdown(file)) {
      const where = { source: chunk.source, heading: chunk.heading, anchor: chunk.anchor };
      const problemSection = /problem codes/i.test(chunk.heading);
      for (const t of tables(chunk.body)) {
        const codeCol = t.header.indexOf("code");
        if (t.header[0] === "metric") {
          const requestCol = t.header.findIndex((h) => h.includes("request"));
          const meaningCol = t.header.indexOf("meaning");
          for (const row of t.rows) {
            const [name] = codesIn(row[0] ?? "");
            if (!name || meaningCol < 0) continue;
            const requestName = requestCol >= 0 ? /`([^`]+)`/.exec(row[requestCol] ?? "")?.[1] : undefined;
            glossary.metrics.set(name, { name, requestName, meaning: row[meaningCol], ...where });
          }
        } else if (codeCol >= 0) {
          const statusCol = t.header.indexOf("status");
          // The problem-code table says per row whether the code refuses the dataset or only warns.
          const verdictCol = t.header.indexOf("verdict");
          const textCols = t.header.map((_, i) => i).filter((i) => i !== codeCol && i !== statusCol && i !== verdictCol);
          for (const row of t.rows) {
            const codes = codesIn(row[codeCol] ?? "");
            const meaning = textCols
              .map((i) => row[i])
              .filter(Boolean)
              .join(" — ");
            const status = statusCol >= 0 ? Number(row[statusCol]) || undefined : undefined;
            const warns = verdictCol >= 0 && /warn/i.test(row[verdictCol] ?? "");
            const kind = problemSection ? (warns ? "dataset_warning" : "dataset_error") : "api_error";
            meaningsFor(codes, meaning).forEach((m, i) => {
              if (!glossary.codes.has(codes[i])) glossary.codes.set(codes[i], { code: codes[i], meaning: m, kind, status, ...where });
            });
          }
        }
      }
      if (problemSection) {
        // "Warnings (the dataset stays valid): `code` (meaning), `code` (meaning), ..." as one paragraph.
        const para = /Warnings[^:]*:([\s\S]*?)(?:\n\s*\n|$)/.exec(chunk.body)?.[1] ?? "";
        for (const m of para.matchAll(/`([a-z][a-z0-9_]*)`\s*\(([^)]*(?:\([^)]*\)[^)]*)*)\)/g)) {
          glossary.codes.set(m[1], { code: m[1], meaning: m[2].replace(/\s+/g, " "), kind: "dataset_warning", ...where });
        }
      }
    }
  }
  // A word written once may be a typo, or an example of one ("experimneto" in docs/chat.md): real words recur.
  for (const [w, n] of seen) if (n >= 2) glossary.words.add(w);
  return glossary;
}

/** Finds a metric by contract name (f_macro), request name (F-macro) or a loose spelling (f macro, F1). */
export function findMetric(glossary: Glossary, term: string): MetricEntry | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
  const t = norm(term);
  for (const m of glossary.metrics.values()) if (norm(m.name) === t || (m.requestName && norm(m.requestName) === t)) return m;
  const aliases: Record<string, string> = {
    f1: "f_macro",
    fscore: "f_macro",
    macrof1: "f_macro",
    tpr: "sensitivity",
    tnr: "specificity",
    rocauc: "auc",
    auroc: "auc",
    map: "map50",
    calibration: "ece",
  };
  const alias = aliases[t];
  return alias ? glossary.metrics.get(alias) : undefined;
}
