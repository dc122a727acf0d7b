import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform } from "node:stream";
import yauzl from "yauzl";
import { DatasetFault } from "./report.js";
import { msg } from "../errors.js";
import { openZipFile } from "./zip-reader.js";

// Safe, streaming zip extraction. yauzl reads the central directory and each entry through a file
// descriptor with random access, so memory stays bounded whatever the archive's size (adm-zip reads
// the whole archive into one Buffer: a 4 GB zip needs 4 GB of heap). Every entry is checked in a first
// pass over the central directory before anything is written; then only the files a task reads are extracted.

export interface ExtractLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
  maxCompressionRatio: number;
}

export interface ExtractResult {
  /** Folder the archive was extracted to. */
  dir: string;
  /** Relative paths (forward slashes) of the archive's files, in archive order (written only when extracted). */
  files: string[];
  /** The one folder around everything, if the archive has one (tolerated, then removed from paths). */
  topLevelFolder: string | null;
  totalBytes: number;
  /** Operating-system clutter that was skipped (__MACOSX/, .DS_Store, Thumbs.db). */
  skipped: number;
}

/** A checked archive whose files are extracted under `dir` when asked (prepare.ts; analyse.ts asks). */
export interface DatasetArchive extends ExtractResult {
  /** Extracts these archive paths (forward slashes, top-level folder included) under dir; repeats are skipped. */
  extract(names: string[]): Promise<void>;
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

async function openZip(file: string): Promise<yauzl.ZipFile> {
  try {
    return await openZipFile(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true });
  } catch (err) {
    throw new DatasetFault("zip_unreadable", msg("zip.unreadable", { why: (err as Error).message ?? "unknown error" }));
  }
}

/** Walks the central directory, calling `visit` for each entry; resolves when done. */
function eachEntry(zip: yauzl.ZipFile, visit: (entry: yauzl.Entry) => Promise<void>, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      reject(
        err instanceof DatasetFault || (err as Error)?.name === "AbortError"
          ? err
          : new DatasetFault("zip_corrupt", msg("zip.damaged", { why: (err as Error).message })),
      );
    };
    zip.on("error", fail);
    zip.on("end", () => !failed && resolve());
    zip.on("entry", (entry: yauzl.Entry) => {
      if (signal?.aborted) return fail(abortError(signal));
      visit(entry).then(() => !failed && zip.readEntry(), fail);
    });
    zip.readEntry();
  });
}

/** An entry's name from a zip opened with decodeStrings: false, decoded as yauzl would, without its validation. */
export function decodeName(entry: yauzl.Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  // yauzl's own decoder: UTF-8 flag, Info-ZIP Unicode path field, else CP437; backslashes become slashes.
  const getName = (yauzl as unknown as { getFileNameLowLevel: (f: number, b: Buffer, e: unknown, strict: boolean) => string })
    .getFileNameLowLevel;
  return getName(entry.generalPurposeBitFlag, raw, entry.extraFields, false);
}

/** Checks one entry's name and attributes; throws a DatasetFault naming the entry when unsafe. */
export function planEntry(
  name: string,
  entry: Pick<yauzl.Entry, "externalFileAttributes" | "generalPurposeBitFlag" | "uncompressedSize" | "compressedSize">,
  limits: ExtractLimits,
): Planned {
  if (/^[a-zA-Z]:/.test(name) || name.startsWith("/")) {
    throw new DatasetFault("zip_unsafe_path", msg("zip.absolute", { name }), { path: name });
  }
  const isDir = name.endsWith("/");
  const segments = (isDir ? name.slice(0, -1) : name).split("/");
  if (segments.includes("..")) {
    throw new DatasetFault("zip_unsafe_path", msg("zip.outside", { name }), { path: name });
  }
  if (segments.some((s) => s === "" || s === ".") || /[\u0000-\u001f]/.test(name)) {
    throw new DatasetFault("zip_unsafe_path", msg("zip.bad_segment", { name }), { path: name });
  }
  const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (mode === S_IFLNK) {
    throw new DatasetFault("zip_symlink", msg("zip.symlink", { name }), {
      path: name,
    });
  }
  if (entry.generalPurposeBitFlag & 0x1) {
    throw new DatasetFault("zip_encrypted", msg("zip.encrypted", { name }), { path: name });
  }
  if (entry.uncompressedSize > RATIO_MIN_BYTES && entry.uncompressedSize / Math.max(entry.compressedSize, 1) > limits.maxCompressionRatio) {
    throw new DatasetFault(
      "zip_bomb",
      msg("zip.entry_bomb", {
        name,
        times: Math.round(entry.uncompressedSize / Math.max(entry.compressedSize, 1)),
        max: limits.maxCompressionRatio,
      }),
      { path: name },
    );
  }
  return { name, segments, isDir, uncompressedSize: entry.uncompressedSize };
}

function abortError(signal: AbortSignal): Error {
  // A new Error: the reason may be a DOMException (AbortSignal.timeout), whose name cannot be reassigned.
  const err = new Error(signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted"), {
    cause: signal.reason,
  });
  err.name = "AbortError";
  return err;
}

/** Counts bytes written for an entry and stops past the declared size (defence in depth beside yauzl's own check). */
function byteGuard(limit: number, name: string) {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > limit) return cb(new DatasetFault("zip_corrupt", msg("zip.more_data", { name }), { path: name }));
      cb(null, chunk);
    },
  });
}

async function writeEntry(stream: NodeJS.ReadableStream, target: string, plan: Planned, signal?: AbortSignal): Promise<void> {
  try {
    // 'wx': never follow or overwrite something already there.
    await pipeline(stream, byteGuard(plan.uncompressedSize, plan.name), fs.createWriteStream(target, { flags: "wx", mode: 0o600 }), {
      signal,
    });
  } catch (err) {
    if ((err as Error).name === "AbortError" || err instanceof DatasetFault) throw err;
    throw new DatasetFault("zip_corrupt", msg("zip.cannot_extract", { name: plan.name, why: (err as Error).message }), { path: plan.name });
  }
}

/**
 * An archive whose central directory has been checked entry by entry (pass 1): nothing is written unless every
 * entry is acceptable. Files are then extracted on demand, only those a task reads (the CSV; for vision, the
 * images the CSV names): a zip of 100,000 files for a `data` task writes one file, not 100,000.
 */
export class OpenedZip {
  private constructor(
    private readonly zip: yauzl.ZipFile,
    /** Entries kept for extraction (those `keep` accepted), by name. */
    private readonly kept: Map<string, { entry: yauzl.Entry; plan: Planned }>,
    /** Relative paths of every file in the archive (clutter skipped), in archive order. */
    readonly files: string[],
    readonly topLevelFolder: string | null,
    readonly totalBytes: number,
    readonly skipped: number,
  ) {}

  /** Pass 1: checks every entry; keeps the yauzl entries of the files `keep` says may be extracted later. */
  static async open(
    zipFile: string,
    limits: ExtractLimits,
    opts: { keep?: (name: string) => boolean; signal?: AbortSignal } = {},
  ): Promise<OpenedZip> {
    const zip = await openZip(zipFile);
    try {
      if (zip.entryCount > limits.maxEntries) {
        throw new DatasetFault("zip_too_many_entries", msg("zip.too_many_entries", { entries: zip.entryCount, max: limits.maxEntries }));
      }
      const kept = new Map<string, { entry: yauzl.Entry; plan: Planned }>();
      const files: Planned[] = [];
      const tops = new Set<string>();
      let total = 0;
      let skipped = 0;
      const seen = new Set<string>();
      await eachEntry(
        zip,
        async (entry) => {
          const name = decodeName(entry);
          const p = planEntry(name, entry, limits);
          if (isJunk(name)) {
            skipped++;
            return;
          }
          tops.add(p.segments[0]);
          if (p.isDir) return;
          if (seen.has(name)) throw new DatasetFault("zip_duplicate_entry", msg("zip.twice", { name }), { path: name });
          total += p.uncompressedSize;
          if (total > limits.maxUncompressedBytes) {
            throw new DatasetFault("zip_too_large", msg("zip.too_large", { max: limits.maxUncompressedBytes }));
          }
          seen.add(name);
          files.push(p);
          if (!opts.keep || opts.keep(name)) kept.set(name, { entry, plan: p });
        },
        opts.signal,
      );
      const zipSize = (await fs.promises.stat(zipFile)).size;
      if (total > 16 * RATIO_MIN_BYTES && total / Math.max(zipSize, 1) > limits.maxCompressionRatio) {
        throw new DatasetFault("zip_bomb", msg("zip.bomb", { times: Math.round(total / zipSize), max: limits.maxCompressionRatio }));
      }
      const topLevelFolder = tops.size === 1 && files.length > 0 && files.every((f) => f.segments.length > 1) ? [...tops][0] : null;
      return new OpenedZip(
        zip,
        kept,
        files.map((f) => f.name),
        topLevelFolder,
        total,
        skipped,
      );
    } catch (err) {
      zip.close();
      throw err;
    }
  }

  /**
   * Pass 2 for the named files (archive paths; each must have been kept): streamed to disk under destDir, a few
   * at once. Names already extracted are skipped.
   */
  async extract(destDir: string, names: Iterable<string>, signal?: AbortSignal): Promise<void> {
    const root = path.resolve(destDir);
    await fs.promises.mkdir(root, { recursive: true, mode: 0o700 });
    // A few entries are written at once: each file costs several thread-pool round trips (open, write,
    // close), and overlapping them hides that latency. Memory stays bounded: IN_FLIGHT streams at a time.
    const running = new Set<Promise<void>>();
    let failure: unknown = null;
    try {
      for (const name of names) {
        if (failure) break;
        if (signal?.aborted) throw abortError(signal);
        if (this.done.has(name)) continue;
        const item = this.kept.get(name);
        if (!item) throw new Error(`internal: '${name}' was not kept for extraction`);
        this.done.add(name);
        const target = path.resolve(root, ...item.plan.segments);
        // Zip-slip, checked on the resolved path whatever the name looked like.
        if (!target.startsWith(root + path.sep))
          throw new DatasetFault("zip_unsafe_path", msg("zip.outside_short", { name }), { path: name });
        const parent = path.dirname(target);
        if (!this.made.has(parent)) {
          await fs.promises.mkdir(parent, { recursive: true, mode: 0o700 });
          this.made.add(parent);
        }
        const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
          this.zip.openReadStream(item.entry, (err, s) =>
            err || !s
              ? reject(new DatasetFault("zip_corrupt", msg("zip.cannot_read", { name, why: err?.message ?? "" }), { path: name }))
              : resolve(s),
          ),
        );
        const job: Promise<void> = writeEntry(stream, target, item.plan, signal)
          .catch((err) => void (failure ??= err))
          .finally(() => running.delete(job));
        running.add(job);
        if (running.size >= IN_FLIGHT) await Promise.race(running);
      }
    } finally {
      await Promise.allSettled([...running]);
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- passes the caught error on unchanged (truthiness narrows `unknown` to `{}`)
    if (failure) throw failure;
  }

  private readonly done = new Set<string>();
  private readonly made = new Set<string>(); // folders already created: one mkdir per folder, not per file

  close(): void {
    this.zip.close();
  }
}

/** Checks the whole archive and extracts every file (the bench and the archive-safety tests use it). */
export async function extractZip(zipFile: string, destDir: string, limits: ExtractLimits, signal?: AbortSignal): Promise<ExtractResult> {
  const opened = await OpenedZip.open(zipFile, limits, { signal });
  try {
    await opened.extract(destDir, opened.files, signal);
    return {
      dir: path.resolve(destDir),
      files: opened.files,
      topLevelFolder: opened.topLevelFolder,
      totalBytes: opened.totalBytes,
      skipped: opened.skipped,
    };
  } finally {
    opened.close();
  }
}
