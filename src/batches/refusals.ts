import { ApiError } from "../errors.js";

// Why a batch's file cannot be scored, in plain words that name the line, the column or the zip entry, and the
// limit when one was passed. A batch fails after its 202, so these reach the sender as the batch's failure_reason;
// each message has its Spanish in src/http/error-messages-es.ts (SPANISH_TEMPLATES), which the batch views use for
// Accept-Language: es. test/unit/batch-refusals.test.ts builds every one and checks that its Spanish is there.

/** A size in the unit a person reads: "512 bytes", "300 KiB", "1 MiB", "2.5 GiB". */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 10 || Number.isInteger(v) ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/** "3 (“age”)": a column by its number (from 1) and, when the header named it, its name. */
export function columnLabel(index: number, header?: string[]): string {
  const name = header?.[index];
  return name ? `${index + 1} (“${name}”)` : String(index + 1);
}

const table = (message: string) => new ApiError(400, "invalid_table", message);
const zip = (message: string) => new ApiError(400, "invalid_batch", message);

export const refusals = {
  lineTooLong: (line: number, max: number) =>
    table(`the row on line ${line} is longer than ${size(max)}, the most one row of a table may hold: is the file a table saved as CSV?`),
  quoteNotClosed: (line: number) =>
    table(
      `line ${line} opens a value with a quote (") that never closes, so the rest of the file would be read as that one value: close the quote, or remove it`,
    ),
  quoteRunsOn: (line: number, max: number) =>
    table(
      `line ${line} opens a value with a quote (") that does not close within ${size(max)}, the most one row of a table may hold: close the quote, or remove it`,
    ),
  textAfterQuote: (line: number, column: string) =>
    table(`line ${line}, column ${column}: a quoted value has more text after its closing quote; put the whole value inside the quotes`),
  missingColumns: (absent: string[], inputs: string[]) =>
    table(
      `the table has no column ${absent.map((n) => `“${n}”`).join(", ")}; this model reads ${inputs.join(", ")} (by name, in any order)`,
    ),
  emptyTable: () => table("the table is empty: it needs a header line naming the model's inputs, then one row per patient"),
  tooManyCells: (max: number, columns: number) =>
    table(
      `the table has more than ${max} cells (rows × columns, here ${columns} columns), the most one batch reads (BATCH_MAX_CELLS): split it into files of at most ${Math.max(1, Math.floor(max / columns) - 1)} rows`,
    ),
  workbookExpands: (limit: number, fileBytes: number, ratio: number) =>
    table(
      `the workbook expands past ${size(limit)} (ZIP_MAX_COMPRESSION_RATIO: ${ratio} times its ${size(fileBytes)}, at least 1 MiB), as a zip bomb does: save its sheet as "CSV UTF-8" and send the CSV`,
    ),
  workbookTexts: (bytes: number, max: number) =>
    table(
      `the workbook's shared texts take ${size(bytes)}, more than the ${size(max)} a batch reads from an .xlsx: save its sheet as "CSV UTF-8" and send the CSV`,
    ),
  resultsTooLarge: (max: number, inputBytes: number) =>
    new ApiError(
      400,
      "invalid_batch",
      `results.csv would be larger than ${size(max)}, the most one batch writes for a file of ${size(inputBytes)} (${RESULTS_PER_INPUT_BYTE} times its size, at least ${size(RESULTS_MIN_BYTES)}): split the file into smaller ones`,
    ),
  zipUnreadable: () => zip("the file is not a readable zip archive"),
  zipDamagedAfter: (entry: string) => zip(`the zip archive is damaged after the entry “${entry}”`),
  zipEntryDamaged: (entry: string) => zip(`the zip entry “${entry}” cannot be read: the archive is damaged there`),
  zipTooManyEntries: (entries: number, max: number) => zip(`the zip has ${entries} entries; the limit is ${max}`),
  imageTooLarge: (entry: string, bytes: number, max: number) =>
    zip(`the zip entry “${entry}” is ${size(bytes)}; one image may be at most ${size(max)} (FETCH_MAX_BYTES)`),
  noImages: () => zip("the zip holds no images (.png, .jpg, .jpeg, .bmp, .tif, .gif, .webp)"),
};

/** results.csv may be this many times the size of the file sent... */
export const RESULTS_PER_INPUT_BYTE = 16;
/** ...and at least this large, so a small file of many short rows is never refused. */
export const RESULTS_MIN_BYTES = 32 * 1024 * 1024;

/** The largest results.csv a batch writes for an input file of this size. */
export const resultsLimit = (inputBytes: number) => Math.max(RESULTS_MIN_BYTES, RESULTS_PER_INPUT_BYTE * inputBytes);
