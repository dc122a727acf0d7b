import yauzl from "yauzl";
import { numericOrNot, parseCsvText } from "./csv.js";
import { isJunk, planEntry, type ExtractLimits } from "./extract.js";
import { pickCsv } from "./analyse.js";
import { isImageFile } from "./images.js";
import { msg } from "../errors.js";
import { DatasetFault, problem, ReportBuilder } from "./report.js";
import { openZipFile } from "./zip-reader.js";

// GET /v1/datasets/columns: the CSV's columns with a type, a few examples and the missing count, so a
// form can offer the column names. Only the CSV entry is read from the zip, never the images.

export interface ColumnInfo {
  name: string;
  type: "numeric" | "categorical" | "image_path" | "empty";
  examples: string[];
  missing: number;
  /** At most MAX_COUNTED distinct values, each on two rows or more on average: each value's row count (a form offers a binary label's positive class from it). */
  value_counts?: Record<string, number>;
}

const MAX_COUNTED = 20;

export interface ColumnsResult {
  csv_path: string | null;
  columns: ColumnInfo[];
  rows: number;
}

const MAX_CSV_BYTES = 256 * 1024 * 1024;

function open(file: string): Promise<yauzl.ZipFile> {
  return openZipFile(file, { lazyEntries: true, decodeStrings: true, strictFileNames: false }).catch((err: Error) => {
    throw new DatasetFault("zip_unreadable", msg("zip.unreadable", { why: err.message }));
  });
}

/** Reads the one CSV of the archive into memory (bounded), checking the entry as extraction would. */
async function readCsvEntry(zipFile: string, limits: ExtractLimits): Promise<{ name: string; data: Buffer } | null> {
  const zip = await open(zipFile);
  try {
    const entries: yauzl.Entry[] = [];
    await new Promise<void>((resolve, reject) => {
      zip.on("entry", (e: yauzl.Entry) => {
        if (entries.length >= limits.maxEntries)
          return reject(new DatasetFault("zip_too_many_entries", problem("dataset.zip_too_many_entries", { max: limits.maxEntries })));
        entries.push(e);
        zip.readEntry();
      });
      zip.on("end", resolve);
      zip.on("error", (err: Error) => reject(new DatasetFault("zip_unsafe_path", problem("dataset.zip_unlistable", { why: err.message }))));
      zip.readEntry();
    });
    const files = entries.filter((e) => !e.fileName.endsWith("/") && !isJunk(e.fileName)).map((e) => e.fileName);
    const tops = new Set(files.map((f) => f.split("/")[0]));
    const top = tops.size === 1 && files.every((f) => f.includes("/")) ? [...tops][0] : null;
    const name = pickCsv(files, top);
    if (!name) return null;
    const entry = entries.find((e) => e.fileName === name)!;
    planEntry(name, entry, limits);
    if (entry.uncompressedSize > MAX_CSV_BYTES)
      throw new DatasetFault("csv_too_large", problem("dataset.csv_too_large", { path: name, max: MAX_CSV_BYTES }), { path: name });
    const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
      zip.openReadStream(entry, (err, s) =>
        err || !s ? reject(new DatasetFault("zip_corrupt", msg("zip.cannot_read", { name, why: err?.message ?? "" }))) : resolve(s),
      ),
    );
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    return { name, data: Buffer.concat(chunks) };
  } finally {
    zip.close();
  }
}

export async function listColumns(zipFile: string, limits: ExtractLimits): Promise<ColumnsResult> {
  const csv = await readCsvEntry(zipFile, limits);
  if (!csv) return { csv_path: null, columns: [], rows: 0 };
  const table = parseCsvText(csv.data, new ReportBuilder(), csv.name);
  const rows = table.rows.filter((r): r is string[] => r !== null);
  const columns = table.header.map((name, i): ColumnInfo => {
    const values = rows.map((r) => r[i] ?? "");
    const present = values.filter((v) => v !== "");
    const examples = [...new Set(present)].slice(0, 3);
    let type: ColumnInfo["type"] = "empty";
    let markers = 0;
    if (present.length) {
      const read = numericOrNot(present, table.delimiter);
      if (read.numeric) [type, markers] = ["numeric", read.markers];
      else if (present.every((v) => isImageFile(v))) type = "image_path";
      else type = "categorical";
    }
    const counts = new Map<string, number>();
    for (const v of present) {
      const key = v.trim();
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (counts.size > MAX_COUNTED) break;
    }
    // Counted only where values repeat (a label-like column), never for an id or a measurement with few rows.
    const counted = counts.size <= MAX_COUNTED && counts.size * 2 <= present.length;
    // Missing: empty entries, and in a numeric column the missing-value markers (NA, ?, ...).
    return {
      name,
      type,
      examples,
      missing: values.length - present.length + markers,
      ...(counted ? { value_counts: Object.fromEntries(counts) } : {}),
    };
  });
  return { csv_path: csv.name, columns, rows: rows.length };
}
