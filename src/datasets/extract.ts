import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform } from "node:stream";
import yauzl from "yauzl";
import { DatasetFault } from "./report.js";

// Safe, streaming zip extraction. yauzl reads the central directory and each entry through a file
// descriptor with random access, so memory stays bounded whatever the archive's size (adm-zip reads
// the whole archive into one Buffer: a 4 GB zip needs 4 GB of heap). Every entry is checked in a first
// pass over the central directory before anything is written; a second pass extracts.

export interface ExtractLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
  maxCompressionRatio: number;
}

export interface ExtractResult {
  /** Folder the archive was extracted to. */
  dir: string;
  /** Relative paths (forward slashes) of the files written, in archive order. */
  files: string[];
  /** The one folder around everything, if the archive has one (tolerated, then removed from paths). */
  topLevelFolder: string | null;
  totalBytes: number;
  /** Operating-system clutter that was skipped (__MACOSX/, .DS_Store, Thumbs.db). */
  skipped: number;
}

/** Entries below this size are never called bombs: tiny files compress absurdly well and harm nobody. */
const RATIO_MIN_BYTES = 1024 * 1024;
const IN_FLIGHT = 8;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

interface Planned {
  name: string;
  segments: string[];
  isDir: boolean;
  uncompressedSize: number;
}

export function isJunk(name: string): boolean {
  const base = name.replace(/\/$/, "").split("/").pop() ?? "";
  return name.startsWith("__MACOSX/") || base === ".DS_Store" || base === "Thumbs.db" || base.startsWith("._");
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) reject(new DatasetFault("zip_unreadable", `the file is not a readable zip archive (${err?.message ?? "unknown error"})`));
      else resolve(zip);
    });
  });
}

/** Walks the central directory, calling `visit` for each entry; resolves when done. */
function eachEntry(zip: yauzl.ZipFile, visit: (entry: yauzl.Entry) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      reject(err instanceof DatasetFault || (err as Error)?.name === "AbortError" ? err : new DatasetFault("zip_corrupt", `the zip archive is damaged: ${(err as Error).message}`));
    };
    zip.on("error", fail);
    zip.on("end", () => !failed && resolve());
    zip.on("entry", (entry: yauzl.Entry) => {
      visit(entry).then(() => !failed && zip.readEntry(), fail);
    });
    zip.readEntry();
  });
}

function decodeName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  // yauzl's own decoder: UTF-8 flag, Info-ZIP Unicode path field, else CP437; backslashes become slashes.
  const getName = (yauzl as unknown as { getFileNameLowLevel: (f: number, b: Buffer, e: unknown, strict: boolean) => string }).getFileNameLowLevel;
  return getName(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
}

/** Checks one entry's name and attributes; throws a DatasetFault naming the entry when unsafe. */
export function planEntry(name: string, entry: Pick<yauzl.Entry, "externalFileAttributes" | "generalPurposeBitFlag" | "uncompressedSize" | "compressedSize">, limits: ExtractLimits): Planned {
  if (/^[a-zA-Z]:/.test(name) || name.startsWith("/")) {
    throw new DatasetFault("zip_unsafe_path", `the zip entry '${name}' has an absolute path; zip entries must be relative`, { path: name });
  }
  const isDir = name.endsWith("/");
  const segments = (isDir ? name.slice(0, -1) : name).split("/");
  if (segments.includes("..")) {
    throw new DatasetFault("zip_unsafe_path", `the zip entry '${name}' points outside the archive ('..'); it was refused`, { path: name });
  }
  if (segments.some((s) => s === "" || s === ".") || /[\u0000-\u001f]/.test(name)) {
    throw new DatasetFault("zip_unsafe_path", `the zip entry '${name}' has an empty segment or a control character`, { path: name });
  }
  const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (mode === S_IFLNK) {
    throw new DatasetFault("zip_symlink", `the zip entry '${name}' is a symbolic link; links are refused (add the file itself)`, { path: name });
  }
  if (entry.generalPurposeBitFlag & 0x1) {
    throw new DatasetFault("zip_encrypted", `the zip entry '${name}' is encrypted; upload a zip without a password`, { path: name });
  }
  if (entry.uncompressedSize > RATIO_MIN_BYTES && entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxCompressionRatio) {
    throw new DatasetFault(
      "zip_bomb",
      `the zip entry '${name}' expands ${Math.round(entry.uncompressedSize / Math.max(entry.compressedSize, 1))} times (limit ${limits.maxCompressionRatio}); it looks like a zip bomb`,
      { path: name },
    );
  }
  return { name, segments, isDir, uncompressedSize: entry.uncompressedSize };
}

function abortError(signal: AbortSignal): Error {
  const err = signal.reason instanceof Error ? signal.reason : new Error("aborted");
  if (err.name !== "AbortError") err.name = "AbortError";
  return err;
}

/** Counts bytes written for an entry and stops past the declared size (defence in depth beside yauzl's own check). */
function byteGuard(limit: number, name: string) {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > limit) return cb(new DatasetFault("zip_corrupt", `the zip entry '${name}' holds more data than it declares`, { path: name }));
      cb(null, chunk);
    },
  });
}

async function writeEntry(stream: NodeJS.ReadableStream, target: string, plan: Planned, signal?: AbortSignal): Promise<void> {
  try {
    // 'wx': never follow or overwrite something already there.
    await pipeline(stream, byteGuard(plan.uncompressedSize, plan.name), fs.createWriteStream(target, { flags: "wx" }), { signal });
  } catch (err) {
    if ((err as Error).name === "AbortError" || err instanceof DatasetFault) throw err;
    throw new DatasetFault("zip_corrupt", `cannot extract '${plan.name}': ${(err as Error).message}`, { path: plan.name });
  }
}

export async function extractZip(zipFile: string, destDir: string, limits: ExtractLimits, signal?: AbortSignal): Promise<ExtractResult> {
  let zip = await openZip(zipFile);
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new DatasetFault("zip_too_many_entries", `the zip has ${zip.entryCount} entries; the limit is ${limits.maxEntries}`);
    }
    // Pass 1: the central directory only. Nothing is written unless every entry is acceptable.
    const planned: Planned[] = [];
    let total = 0;
    let skipped = 0;
    const seen = new Set<string>();
    await eachEntry(zip, async (entry) => {
      const name = decodeName(entry);
      const p = planEntry(name, entry, limits);
      if (isJunk(name)) {
        skipped++;
        return;
      }
      if (!p.isDir) {
        if (seen.has(name)) throw new DatasetFault("zip_duplicate_entry", `the zip holds '${name}' twice`, { path: name });
        seen.add(name);
        total += p.uncompressedSize;
        if (total > limits.maxUncompressedBytes) {
          throw new DatasetFault("zip_too_large", `the zip expands to more than ${limits.maxUncompressedBytes} bytes (the limit)`);
        }
      }
      planned.push(p);
    });
    const zipSize = (await fs.promises.stat(zipFile)).size;
    if (total > 16 * RATIO_MIN_BYTES && total / Math.max(zipSize, 1) > limits.maxCompressionRatio) {
      throw new DatasetFault("zip_bomb", `the zip expands ${Math.round(total / zipSize)} times its size (limit ${limits.maxCompressionRatio}); it looks like a zip bomb`);
    }
    const files = planned.filter((p) => !p.isDir);
    const tops = new Set(planned.map((p) => p.segments[0]));
    const topLevelFolder = tops.size === 1 && files.length > 0 && files.every((f) => f.segments.length > 1) ? [...tops][0] : null;

    // Pass 2: extract, entry by entry, streamed to disk (a ZipFile walks its directory once: reopen).
    zip.close();
    zip = await openZip(zipFile);
    const root = path.resolve(destDir);
    await fs.promises.mkdir(root, { recursive: true });
    const wanted = new Map(files.map((f) => [f.name, f]));
    const made = new Set<string>(); // folders already created: one mkdir per folder, not per file
    // A few entries are written at once: each file costs several thread-pool round trips (open, write,
    // close), and overlapping them hides that latency. Memory stays bounded: IN_FLIGHT streams at a time.
    const running = new Set<Promise<void>>();
    let failure: unknown = null;
    try {
      await eachEntry(zip, async (entry) => {
        if (failure) throw failure;
        if (signal?.aborted) throw abortError(signal);
        const name = decodeName(entry);
        const plan = wanted.get(name);
        if (!plan) return;
        const target = path.resolve(root, ...plan.segments);
        // Zip-slip, checked on the resolved path whatever the name looked like.
        if (!target.startsWith(root + path.sep)) throw new DatasetFault("zip_unsafe_path", `the zip entry '${name}' points outside the archive`, { path: name });
        const parent = path.dirname(target);
        if (!made.has(parent)) {
          await fs.promises.mkdir(parent, { recursive: true });
          made.add(parent);
        }
        const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
          zip.openReadStream(entry, (err, s) => (err || !s ? reject(new DatasetFault("zip_corrupt", `cannot read '${name}': ${err?.message}`, { path: name })) : resolve(s))),
        );
        const job: Promise<void> = writeEntry(stream, target, plan, signal)
          .catch((err) => void (failure ??= err))
          .finally(() => running.delete(job));
        running.add(job);
        if (running.size >= IN_FLIGHT) await Promise.race(running);
        if (failure) throw failure;
      });
    } finally {
      await Promise.allSettled([...running]);
    }
    if (failure) throw failure;
    return { dir: root, files: files.map((f) => f.name), topLevelFolder, totalBytes: total, skipped };
  } finally {
    zip.close();
  }
}
