import { ApiError, msg, type Message } from "../errors.js";

// Why a batch's file cannot be scored, in plain words that name the line, the column or the zip entry, and the
// limit when one was passed. A batch fails after its 202, so these reach the sender as the batch's failure_reason;
// each is a key of the one catalog (locales/<lng>/errors.json, batch.*), kept with the batch (failure_text) so its
// views say it in the language of Accept-Language. test/unit/batch-refusals.test.ts builds every one in both.

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

const table = (text: Message) => new ApiError(400, "invalid_table", text);
const zip = (text: Message) => new ApiError(400, "invalid_batch", text);

export const refusals = {
  lineTooLong: (line: number, max: number) => table(msg("batch.line_too_long", { line, max: size(max) })),
  quoteNotClosed: (line: number) => table(msg("batch.quote_not_closed", { line })),
  quoteRunsOn: (line: number, max: number) => table(msg("batch.quote_runs_on", { line, max: size(max) })),
  textAfterQuote: (line: number, column: string) => table(msg("batch.text_after_quote", { line, column })),
  missingColumns: (absent: string[], inputs: string[]) =>
    table(msg("batch.missing_columns", { columns: absent.map((n) => `“${n}”`).join(", "), reads: inputs.join(", ") })),
  emptyTable: () => table(msg("batch.empty_table")),
  tooManyCells: (max: number, columns: number) =>
    table(msg("batch.too_many_cells", { max, width: columns, rows: Math.max(1, Math.floor(max / columns) - 1) })),
  workbookExpands: (limit: number, fileBytes: number, ratio: number) =>
    table(msg("batch.workbook_expands", { limit: size(limit), ratio, size: size(fileBytes) })),
  workbookTexts: (bytes: number, max: number) => table(msg("batch.workbook_texts", { size: size(bytes), max: size(max) })),
  resultsTooLarge: (max: number, inputBytes: number) =>
    zip(
      msg("batch.results_too_large", { max: size(max), size: size(inputBytes), k: RESULTS_PER_INPUT_BYTE, floor: size(RESULTS_MIN_BYTES) }),
    ),
  zipUnreadable: () => zip(msg("batch.zip_unreadable")),
  zipDamagedAfter: (entry: string) => zip(msg("batch.zip_damaged_after", { name: entry })),
  zipEntryDamaged: (entry: string) => zip(msg("batch.zip_entry_damaged", { name: entry })),
  zipTooManyEntries: (entries: number, max: number) => zip(msg("batch.zip_too_many_entries", { entries, max })),
  imageTooLarge: (entry: string, bytes: number, max: number) =>
    zip(msg("batch.image_too_large", { name: entry, size: size(bytes), max: size(max) })),
  noImages: () => zip(msg("batch.no_images")),
};

/** results.csv may be this many times the size of the file sent... */
export const RESULTS_PER_INPUT_BYTE = 16;
/** ...and at least this large, so a small file of many short rows is never refused. */
export const RESULTS_MIN_BYTES = 32 * 1024 * 1024;

/** The largest results.csv a batch writes for an input file of this size. */
export const resultsLimit = (inputBytes: number) => Math.max(RESULTS_MIN_BYTES, RESULTS_PER_INPUT_BYTE * inputBytes);
