import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { parse } from "csv-parse";
import yauzl from "yauzl";
import type { ServedManifest } from "../serving/manifest.js";
import { ApiError } from "../errors.js";

// What a batch reads: the rows of a table (CSV; an .xlsx is converted to one first) turned into /predict messages
// by column name, or the images of a zip. A row's values are checked here only as far as /predict cannot: raw
// category values are mapped to the model's codes (a hospital's spreadsheet says "F", the API takes 0), and values
// outside the training range are flagged. Everything else (missing values, NaN, counts) is /predict's own check.

type Column = NonNullable<ServedManifest["input"]["columns"]>[number];

export interface RowItem {
  id: string;
  /** The /predict message, or why the row cannot be sent (the row still gets a line in the results). */
  message?: Array<number | null>;
  error?: string;
  /** Columns whose value lies outside the training data's range. */
  outOfRange: string[];
}

const MISSING = new Set(["", "na", "nan", "?", "null", "none"]);
const ID_NAMES = new Set(["patient_id", "id", "patient", "paciente", "id_paciente"]);

/**
 * The table's rows as messages, in the file's order. The model's inputs are found by name (any case), so extra
 * columns (the label, notes) are ignored; the id is a column named like an id, else the first column that is not an
 * input, else the row number.
 */
export async function* tableRows(csvFile: string, manifest: ServedManifest): AsyncGenerator<RowItem> {
  const columns = manifest.input.columns ?? [];
  const parser = fs.createReadStream(csvFile).pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, trim: true }));
  let at: number[] | undefined;
  let idAt = -1;
  let line = 1;
  for await (const record of parser as AsyncIterable<string[]>) {
    if (!at) {
      const header = record.map((h) => h.toLowerCase());
      at = columns.map((c) => header.indexOf(c.name.toLowerCase()));
      const absent = columns.filter((_, i) => at![i] === -1).map((c) => c.name);
      if (absent.length) {
        throw new ApiError(
          400,
          "invalid_table",
          `the table has no column ${absent.map((n) => `“${n}”`).join(", ")}; this model reads ${columns.map((c) => c.name).join(", ")} (by name, in any order)`,
        );
      }
      idAt = header.findIndex((h) => ID_NAMES.has(h));
      if (idAt === -1) idAt = header.findIndex((_, i) => !at!.includes(i));
      continue;
    }
    line++;
    yield rowItem(record, at, columns, idAt >= 0 ? record[idAt] || `row ${line}` : `row ${line}`);
  }
  if (!at)
    throw new ApiError(
      400,
      "invalid_table",
      "the table is empty: it needs a header line naming the model's inputs, then one row per patient",
    );
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

export const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp"]);

/** Operating-system clutter in zips made on a Mac or Windows: never images to score. */
const JUNK = /(^|\/)(__MACOSX\/|\._|\.DS_Store$|Thumbs\.db$)/;

/**
 * The images of a zip, in archive order, read straight from the archive one at a time (extracting them to disk
 * first cost more than scoring them). Other files (a CSV of ids, notes) are skipped. Each image is held to the
 * size /predict allows for one image, and the entry count to the dataset limit: a zip bomb fails on its first
 * oversized entry instead of filling memory.
 */
export async function* zipImages(
  zipFile: string,
  limits: { maxImageBytes: number; maxEntries: number },
): AsyncGenerator<{ name: string; bytes: Buffer }> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(zipFile, { lazyEntries: true, autoClose: false }, (err, z) =>
      err ? reject(new ApiError(400, "invalid_batch", "the file is not a readable zip archive")) : resolve(z),
    ),
  );
  try {
    if (zip.entryCount > limits.maxEntries)
      throw new ApiError(400, "invalid_batch", `the zip has ${zip.entryCount} entries; the limit is ${limits.maxEntries}`);
    for (;;) {
      const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
        zip.once("entry", resolve);
        zip.once("end", () => resolve(null));
        zip.once("error", reject);
        zip.readEntry();
      });
      zip.removeAllListeners("entry").removeAllListeners("end").removeAllListeners("error");
      if (!entry) return;
      const name = entry.fileName;
      if (!isImageEntry(name)) continue;
      if (entry.uncompressedSize > limits.maxImageBytes) {
        throw new ApiError(
          400,
          "invalid_batch",
          `${name} is ${entry.uncompressedSize} bytes; one image may be at most ${limits.maxImageBytes} (FETCH_MAX_BYTES)`,
        );
      }
      const stream = await new Promise<Readable>((resolve, reject) =>
        zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))),
      );
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      yield { name, bytes: Buffer.concat(chunks) };
    }
  } finally {
    zip.close();
  }
}

const isImageEntry = (name: string) => !name.endsWith("/") && !JUNK.test(name) && IMAGE_EXTENSIONS.has(path.extname(name).toLowerCase());

/**
 * How many images zipImages will yield, from the zip's central directory alone (no image is read): a batch knows its
 * total before the first image, and a batch with overlays is refused at once past its limit. An unreadable zip
 * counts as 0; zipImages then says why.
 */
export async function countZipImages(zipFile: string): Promise<number> {
  let zip: yauzl.ZipFile;
  try {
    zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.open(zipFile, { lazyEntries: true, autoClose: false }, (err, z) => (err ? reject(err) : resolve(z))),
    );
  } catch {
    return 0;
  }
  let n = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on("entry", (entry: yauzl.Entry) => {
        if (isImageEntry(entry.fileName)) n++;
        zip.readEntry();
      });
      zip.once("end", resolve);
      zip.once("error", reject);
      zip.readEntry();
    });
  } catch {
    return n;
  } finally {
    zip.close();
  }
  return n;
}

/** The rows tableRows will yield (records after the header), counted in a first pass so progress has a total; null for a table tableRows will refuse. */
export async function countTableRows(csvFile: string): Promise<number | null> {
  const parser = fs.createReadStream(csvFile).pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, trim: true }));
  let n = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) if (record) n++;
  } catch {
    return null; // tableRows says what is wrong with it
  }
  return Math.max(0, n - 1);
}

/** A data: URI for an image's bytes, as a program sends one to /predict (the type is read from the bytes there). */
export function dataUri(bytes: Buffer): string {
  return `data:image/png;base64,${bytes.toString("base64")}`;
}
