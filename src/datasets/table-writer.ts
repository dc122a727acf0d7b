import fs from "node:fs";
import { once } from "node:events";

/** RFC 4180 with every field quoted: the normalised table the Python pipelines read with csv.DictReader. */
export function csvLine(values: string[]): string {
  return values.map((v) => `"${v.replace(/"/g, '""')}"`).join(",") + "\r\n";
}

/**
 * Characters a spreadsheet may split a CSV line on: the comma of this file, and the list separators of other locales
 * (Excel in Spanish, German or French opens a .csv on ';'; some read tabs or '|'), with line breaks.
 */
const SEPARATORS = /[,;\t|\r\n"]/;
/** A part of the text, after any of those separators (or at the start), that a spreadsheet would run as a formula. */
const FORMULA_PART = /(?:^|[,;\t|\r\n])[ \u00a0]*[=+\-@\t\r]/;

/**
 * One cell of a CSV a person opens in a spreadsheet (batch results, the audit log). Text holding any character a
 * spreadsheet of some locale splits on is quoted, so it stays one cell whatever the separator (an id "x;=1+1;" is
 * not cut into "x" and "=1+1" by a Spanish Excel); text that starts with =, +, -, @, a tab or a carriage return, or
 * holds one of those right after such a separator (spaces allowed between), is written with a leading ', so no
 * part of it reads as a formula even where quotes are ignored. For text only: numbers are written as they are, so a
 * negative score stays a number.
 */
export function spreadsheetCell(text: string): string {
  const safe = FORMULA_PART.test(text) ? `'${text}` : text;
  return SEPARATORS.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Streams rows to `file` (UTF-8, no BOM), honouring back-pressure so a large table never sits in one string. */
export async function writeCsv(file: string, header: string[], rows: Iterable<string[]>): Promise<void> {
  const tmp = `${file}.partial`;
  const out = fs.createWriteStream(tmp);
  const closed = once(out, "close");
  try {
    if (!out.write(csvLine(header))) await once(out, "drain");
    for (const r of rows) {
      if (!out.write(csvLine(r))) await once(out, "drain");
    }
  } finally {
    out.end();
    await closed;
  }
  await fs.promises.rename(tmp, file);
}
