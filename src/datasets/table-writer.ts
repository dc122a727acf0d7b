import fs from "node:fs";
import { once } from "node:events";

/** RFC 4180 with every field quoted: the normalised table the Python pipelines read with csv.DictReader. */
export function csvLine(values: string[]): string {
  return values.map((v) => `"${v.replace(/"/g, '""')}"`).join(",") + "\r\n";
}

/**
 * One cell of a CSV a person opens in a spreadsheet (batch results, the audit log): quoted only when it must be, and
 * text that a spreadsheet would run as a formula (=, +, -, @, tab, carriage return first) written with a leading '.
 * For text only: numbers are written as they are, so a negative score stays a number.
 */
export function spreadsheetCell(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
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
