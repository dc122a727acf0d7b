import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// The documentation the assistant searches and quotes: README.md and every docs/**/*.md of the repository,
// read at start-up and cut into sections small enough to quote.

export interface DocFile {
  /** Path relative to the repository root, e.g. "README.md" or "docs/datasets.md". */
  source: string;
  text: string;
}

export interface DocChunk {
  seq: number;
  source: string;
  /** The heading path, e.g. "Datasets › Problem codes". */
  heading: string;
  /** GitHub-style anchor of the innermost heading. */
  anchor: string;
  body: string;
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const MAX_CHUNK_CHARS = 1500;

/** README.md first, then docs/**\/*.md in path order. Missing files are skipped. */
export function readDocs(root = REPO_ROOT): DocFile[] {
  const files: DocFile[] = [];
  const readme = path.join(root, "README.md");
  if (fs.existsSync(readme)) files.push({ source: "README.md", text: fs.readFileSync(readme, "utf8") });
  const docsDir = path.join(root, "docs");
  if (fs.existsSync(docsDir)) {
    const found = fs
      .readdirSync(docsDir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".md"))
      .sort();
    for (const rel of found)
      files.push({
        source: path.posix.join("docs", rel.split(path.sep).join("/")),
        text: fs.readFileSync(path.join(docsDir, rel), "utf8"),
      });
  }
  return files;
}

/** Hash of every file's name and text: the index is rebuilt only when the docs change. */
export function docsVersion(files: DocFile[]): string {
  const h = createHash("sha256");
  for (const f of files) h.update(f.source).update("\0").update(f.text).update("\0");
  return h.digest("hex").slice(0, 16);
}

export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

/** Splits a markdown file at its headings (outside code fences); long sections are split again at blank lines. */
export function chunkMarkdown(file: DocFile, firstSeq = 0): DocChunk[] {
  const chunks: DocChunk[] = [];
  const trail: string[] = [];
  let lines: string[] = [];
  let inFence = false;
  const flush = () => {
    const body = lines
      .join("\n")
      .replace(/<!--[\s\S]*?-->/g, "")
      .trim();
    lines = [];
    if (!body && !trail.length) return;
    const heading = trail.filter(Boolean).join(" › ") || file.source;
    const anchor = slug(trail.filter(Boolean).at(-1) ?? "");
    for (const part of splitLong(body)) chunks.push({ seq: firstSeq + chunks.length, source: file.source, heading, anchor, body: part });
  };
  for (const line of file.text.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const m = !inFence && /^(#{1,4})\s+(.*)$/.exec(line);
    if (m) {
      flush();
      const level = m[1].length;
      trail.length = Math.min(trail.length, level - 1);
      while (trail.length < level - 1) trail.push("");
      trail.push(m[2].trim());
    } else lines.push(line);
  }
  flush();
  return chunks.filter((c) => c.body.length > 0);
}

function splitLong(body: string): string[] {
  if (body.length <= MAX_CHUNK_CHARS) return [body];
  const parts: string[] = [];
  let current = "";
  for (const para of body.split(/\n\s*\n/)) {
    if (current && current.length + para.length + 2 > MAX_CHUNK_CHARS) {
      parts.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${para}` : para;
  }
  if (current) parts.push(current);
  return parts;
}

export function chunkDocs(files: DocFile[]): DocChunk[] {
  const out: DocChunk[] = [];
  for (const f of files) out.push(...chunkMarkdown(f, out.length));
  return out;
}
