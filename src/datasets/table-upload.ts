import fs from "node:fs";
import path from "node:path";
import { Transform, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import ExcelJS from "exceljs";
import yazl from "yazl";
import { ApiError, msg } from "../errors.js";
import { csvLine } from "./table-writer.js";
import { feedUpload, isClientAbort, uploadInterrupted, UploadInterruptedError } from "./upload-stream.js";

// A bare table uploaded for a data task: what a clinician tries first is the spreadsheet itself, not a zip of it
// (issue 38 item 4). The server stores it as the dataset every later stage already reads, a zip holding one CSV,
// so validation, training and Retrospective studies need no second path. An .xlsx gives its first sheet, and the
// answer says so.

export type TableKind = "csv" | "xlsx";

/** Spreadsheets are read whole by the XLSX reader's streams; past this a table belongs in a CSV (or a zip). */
export const MAX_XLSX_BYTES = 50 * 1024 * 1024;

export function tableKindOf(objectPath: string): TableKind | null {
  const lower = objectPath.toLowerCase();
  return lower.endsWith(".csv") ? "csv" : lower.endsWith(".xlsx") ? "xlsx" : null;
}

class TooLargeError extends Error {}

/** Copies the upload to a local file, stopping at maxBytes; a client that goes away fails it (nothing is kept). */
export async function spoolUpload(body: Readable, file: string, maxBytes: number): Promise<number> {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      cb(size > maxBytes ? new TooLargeError() : null, chunk);
    },
  });
  const detach = feedUpload(body, counter);
  try {
    await pipeline(counter, fs.createWriteStream(file));
  } catch (err) {
    body.resume();
    await fs.promises.rm(file, { force: true });
    if (err instanceof TooLargeError)
      throw new ApiError(413, "payload_too_large", msg("dataset.table_too_large", { max: maxBytes }), undefined, { connection: "close" });
    if (err instanceof UploadInterruptedError || isClientAbort(err)) throw uploadInterrupted();
    throw err;
  } finally {
    detach();
  }
  return size;
}

/** A CSV must be text: a file with NUL bytes in its first 64 KiB is something else renamed (or UTF-16). */
export async function checkCsvText(file: string, name: string): Promise<void> {
  const handle = await fs.promises.open(file, "r");
  try {
    const head = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead === 0) throw new ApiError(400, "invalid_table", msg("dataset.table_empty", { name }));
    if (head.subarray(0, bytesRead).includes(0)) {
      throw new ApiError(400, "invalid_table", msg("dataset.table_not_text", { name }));
    }
  } finally {
    await handle.close();
  }
}

export interface SheetConversion {
  sheet: string;
  rows: number;
  otherSheets: string[];
}

/** What the conversion has written so far: a caller's limit throws from `check` to stop it (batches bound both). */
export interface SheetProgress {
  csvBytes: number;
  /** Rows x their width (the header's, or a wider row's). */
  cells: number;
  /** The header row's width. */
  width: number;
}

/**
 * The first worksheet of an .xlsx as a CSV: numbers as written, dates as ISO dates, formulas as their cached
 * result, rich text as its text. Streamed row by row, so the event loop is given back between chunks. `check`, when
 * given, is called after each row; an ApiError it throws stops the conversion and is the answer.
 */
export async function xlsxFirstSheetToCsv(
  xlsxFile: string,
  csvFile: string,
  name: string,
  check?: (progress: SheetProgress) => void,
): Promise<SheetConversion> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(xlsxFile, {
    worksheets: "emit",
    sharedStrings: "cache",
    styles: "cache",
    hyperlinks: "ignore",
    entries: "ignore",
  });
  const out = fs.createWriteStream(csvFile);
  const sheets: string[] = [];
  let rows = 0;
  let width = 0;
  const progress: SheetProgress = { csvBytes: 0, cells: 0, width: 0 };
  try {
    for await (const worksheet of reader) {
      const sheet = worksheet as unknown as { name: string } & AsyncIterable<ExcelJS.Row>;
      sheets.push(sheet.name);
      if (sheets.length > 1) continue; // later sheets are listed, not read
      for await (const row of sheet) {
        const values = (row.values as ExcelJS.CellValue[]).slice(1); // ExcelJS rows are 1-based
        if (rows === 0) width = values.length;
        const cells = Array.from({ length: Math.max(width, values.length) }, (_, i) => cellText(values[i]));
        const line = csvLine(cells);
        if (check) {
          progress.csvBytes += Buffer.byteLength(line);
          progress.cells += cells.length;
          progress.width = width;
          check(progress);
        }
        if (!out.write(line)) await new Promise<void>((r) => out.once("drain", () => r()));
        rows++;
      }
    }
  } catch (err) {
    out.destroy();
    if (err instanceof ApiError) throw err;
    // The reader's own message speaks of zip records and XML: not words for the person who sent a spreadsheet.
    throw new ApiError(400, "invalid_table", msg("dataset.workbook_unreadable", { name }));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  if (sheets.length === 0 || rows === 0) throw new ApiError(400, "invalid_table", msg("dataset.workbook_no_rows", { name }));
  return { sheet: sheets[0], rows, otherSheets: sheets.slice(1) };
}

function cellText(v: ExcelJS.CellValue | undefined): string {
  if (v === null || v === undefined) return "";
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
  }
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "string") return String(v);
  if ("result" in v) return cellText(v.result); // a formula: its cached value
  if ("richText" in v) return v.richText.map((t) => t.text).join("");
  if ("text" in v) return String(v.text); // a hyperlink
  if ("error" in v) return ""; // #N/A, #DIV/0!: no value
  return "";
}

/** A zip holding one file, as a stream for the bucket. */
export function zipOneFile(file: string, nameInZip: string): Readable {
  const zip = new yazl.ZipFile();
  zip.addFile(file, nameInZip);
  zip.end();
  return zip.outputStream as Readable;
}

/** The zip's object path for a table's: the same folder and name, .zip instead of .csv/.xlsx. */
export function zipPathFor(tablePath: string): string {
  return tablePath.replace(/\.(csv|xlsx)$/i, ".zip");
}

export function csvNameFor(tablePath: string): string {
  return path.posix.basename(tablePath).replace(/\.(csv|xlsx)$/i, ".csv");
}
