import path from "node:path";
import type { Readable } from "node:stream";
import yauzl from "yauzl";
import { decodeName, planEntry } from "../datasets/extract.js";
import { DatasetFault } from "../datasets/report.js";
import { openZipFile } from "../datasets/zip-reader.js";
import type { ServedManifest } from "../serving/manifest.js";
import { ApiError } from "../errors.js";
import { csvRecords } from "./csv-records.js";
import { refusals } from "./refusals.js";

// What a batch reads: the rows of a table (CSV; an .xlsx is converted to one first) turned into /predict messages
// by column name, or the images of a zip. A row's values are checked here only as far as /predict cannot: raw
// category values are mapped to the model's codes (a hospital's spreadsheet says "F", the API takes 0), and values
// outside the training range are flagged. Everything else (missing values, NaN, counts) is /predict's own check.
// A file that cannot be read is refused with the line, column or zip entry named (refusals.ts).

type Column = NonNullable<ServedManifest["input"]["columns"]>[number];

export interface RowItem {
  id: string;
  /** The /predict message, or why the row cannot be sent (the row still gets a line in the results). */
  message?: Array<number | null>;
  error?: string;
  /** Columns whose value lies outside the training data's range. */
  outOfRange: string[];
}

export interface TableLimits {
  /** Characters one row may hold (csv-records.ts). */
  maxRowChars: number;
  /** Rows x columns (the header's width, or a wider row's), the header included (BATCH_MAX_CELLS). */
  maxCells: number;
}

/** A row of a table is at most this long: 1 MiB holds thousands of columns. */
export const MAX_ROW_CHARS = 1024 * 1024;
/** An id longer than this is not an id (results.csv repeats it on the row's line): the row fails alone. */
export const MAX_ID_CHARS = 256;

const MISSING = new Set(["", "na", "nan", "?", "null", "none"]);
const ID_NAMES = new Set(["patient_id", "id", "patient", "paciente", "id_paciente"]);

interface TableShape {
  header: string[];
  /** Where each model input is in a row. */
  at: number[];
  idAt: number;
}

/**
 * The model's inputs are found by name (any case), so extra columns (the label, notes) are ignored; the id is a
 * column named like an id, else the first column that is not an input, else the row's line.
 */
function shapeOf(header: string[], columns: Column[]): TableShape {
  const lower = header.map((h) => h.toLowerCase());
  const at = columns.map((c) => lower.indexOf(c.name.toLowerCase()));
  const absent = columns.filter((_, i) => at[i] === -1).map((c) => c.name);
  if (absent.length)
    throw refusals.missingColumns(
      absent,
      columns.map((c) => c.name),
    );
  let idAt = lower.findIndex((h) => ID_NAMES.has(h));
  if (idAt === -1) idAt = lower.findIndex((_, i) => !at.includes(i));
  return { header, at, idAt };
}

/**
 * The first pass over a table: its header checked against the model, its rows counted (so progress reads "done of
 * total"), its cells held to `maxCells` and every row to `maxRowChars`, before anything is scored.
 */
export async function scanTable(csvFile: string, manifest: ServedManifest, limits: TableLimits): Promise<{ rows: number }> {
  const columns = manifest.input.columns ?? [];
  let shape: TableShape | undefined;
  let rows = 0;
  let cells = 0;
  for await (const { values } of csvRecords(csvFile, limits.maxRowChars)) {
    if (!shape) shape = shapeOf(values, columns);
    else rows++;
    cells += Math.max(values.length, shape.header.length);
    if (cells > limits.maxCells) throw refusals.tooManyCells(limits.maxCells, shape.header.length);
  }
  if (!shape) throw refusals.emptyTable();
  return { rows };
}

/** The table's rows as messages, in the file's order (scanTable has checked the file). */
export async function* tableRows(csvFile: string, manifest: ServedManifest, limits: TableLimits): AsyncGenerator<RowItem> {
  const columns = manifest.input.columns ?? [];
  let shape: TableShape | undefined;
  for await (const { values, line } of csvRecords(csvFile, limits.maxRowChars)) {
    if (!shape) {
      shape = shapeOf(values, columns);
      continue;
    }
    const id = (shape.idAt >= 0 && values[shape.idAt]) || `row ${line}`;
    if (id.length > MAX_ID_CHARS) {
      yield {
        id: `row ${line}`,
        error: `the id in column “${shape.header[shape.idAt]}” is ${id.length} characters long, more than the ${MAX_ID_CHARS} an id may have`,
        outOfRange: [],
      };
      continue;
    }
    yield rowItem(values, shape.at, columns, id);
  }
  if (!shape) throw refusals.emptyTable();
}

function rowItem(record: string[], at: number[], columns: Column[], id: string): RowItem {
  const message: Array<number | null> = [];
  const outOfRange: string[] = [];
  for (const [i, c] of columns.entries()) {
    const raw = record[at[i]] ?? "";
    if (MISSING.has(raw.toLowerCase())) {
      message.push(null);
      continue;
    }
    if (c.type === "categorical") {
      const code = c.codes?.[raw];
      // The value itself stays out of the message: a category can identify a patient (as in the dataset report).
      if (code === undefined) return { id, error: `${c.name}: a value the model did not see in training`, outOfRange };
      message.push(code);
      continue;
    }
    const v = Number(raw);
    if (!Number.isFinite(v)) return { id, error: `${c.name}: not a number`, outOfRange };
    if ((c.min !== undefined && v < c.min) || (c.max !== undefined && v > c.max)) outOfRange.push(c.name);
    message.push(v);
  }
  return { id, message, outOfRange };
}

/** DICOM files too: /predict reads them (by their bytes, not the name), and a send-back batch writes their answers into the PACS. */
export const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp", ".dcm", ".dicom"]);

/** Operating-system clutter in zips made on a Mac or Windows: never images to score. */
const JUNK = /(^|\/)(__MACOSX\/|\._|\.DS_Store$|Thumbs\.db$)/;

export interface ZipLimits {
  maxImageBytes: number;
  maxEntries: number;
  /** An entry of over 1 MiB that expands more than this is refused, as in a dataset's zip (ZIP_MAX_COMPRESSION_RATIO). */
  maxCompressionRatio: number;
}

/** The zip, its entries' names left to decodeName: yauzl's own check of a name fails the whole walk without naming it. */
async function openBatchZip(zipFile: string): Promise<yauzl.ZipFile> {
  try {
    return await openZipFile(zipFile, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true });
  } catch {
    throw refusals.zipUnreadable();
  }
}

/** The zip's entries in archive order, each with its name, checked as a dataset's entries are (planEntry). */
async function* zipEntries(zip: yauzl.ZipFile, limits: ZipLimits): AsyncGenerator<{ name: string; entry: yauzl.Entry }> {
  if (zip.entryCount > limits.maxEntries) throw refusals.zipTooManyEntries(zip.entryCount, limits.maxEntries);
  let last: string | undefined;
  for (;;) {
    let entry: yauzl.Entry | null;
    try {
      entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
        zip.once("entry", resolve);
        zip.once("end", () => resolve(null));
        zip.once("error", reject);
        zip.readEntry();
      });
    } catch {
      throw last === undefined ? refusals.zipUnreadable() : refusals.zipDamagedAfter(last);
    } finally {
      zip.removeAllListeners("entry").removeAllListeners("end").removeAllListeners("error");
    }
    if (!entry) return;
    const name = decodeName(entry);
    try {
      // A '../' or absolute name, a link, an encrypted entry or a bomb: nothing here writes the name to disk, but
      // overlays.zip would carry it, and such an archive was not made by a person zipping a folder of scans.
      planEntry(name, entry, { ...limits, maxUncompressedBytes: Number.MAX_SAFE_INTEGER });
    } catch (err) {
      if (err instanceof DatasetFault) throw new ApiError(400, "invalid_batch", err.text ?? err.message);
      throw err;
    }
    last = name;
    yield { name, entry };
  }
}

/**
 * The images of a zip, in archive order, read straight from the archive one at a time (extracting them to disk
 * first cost more than scoring them). Other files (a CSV of ids, notes) are skipped. Each image is held to the
 * size /predict allows for one image, and the entry count to the dataset limit: a zip bomb fails on its first
 * oversized entry instead of filling memory. Every entry's name and attributes pass the dataset zips' check.
 */
export async function* zipImages(zipFile: string, limits: ZipLimits): AsyncGenerator<{ name: string; bytes: Buffer }> {
  const zip = await openBatchZip(zipFile);
  try {
    for await (const { name, entry } of zipEntries(zip, limits)) {
      if (!isImageEntry(name)) continue;
      if (entry.uncompressedSize > limits.maxImageBytes) throw refusals.imageTooLarge(name, entry.uncompressedSize, limits.maxImageBytes);
      const chunks: Buffer[] = [];
      try {
        const stream = await new Promise<Readable>((resolve, reject) =>
          zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
        );
        for await (const chunk of stream) chunks.push(chunk as Buffer);
      } catch {
        throw refusals.zipEntryDamaged(name);
      }
      yield { name, bytes: Buffer.concat(chunks) };
    }
  } finally {
    zip.close();
  }
}

const isImageEntry = (name: string) => !name.endsWith("/") && !JUNK.test(name) && IMAGE_EXTENSIONS.has(path.extname(name).toLowerCase());

/**
 * How many images zipImages will yield, from the zip's central directory alone (no image is read): a batch knows its
 * total before the first image, and a batch with overlays is refused at once past its limit. A zip zipImages will
 * refuse counts what was seen before the refusal; zipImages then says why.
 */
export async function countZipImages(zipFile: string, limits: ZipLimits): Promise<number> {
  let n = 0;
  try {
    const zip = await openBatchZip(zipFile);
    try {
      for await (const { name } of zipEntries(zip, limits)) if (isImageEntry(name)) n++;
    } finally {
      zip.close();
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
  return n;
}

/** A data: URI for an image's bytes, as a program sends one to /predict (the type is read from the bytes there). */
export function dataUri(bytes: Buffer): string {
  return `data:image/png;base64,${bytes.toString("base64")}`;
}
