import fs from "node:fs";
import { parse } from "csv-parse/sync";
import { msg } from "../errors.js";
import { headerCharacterProblems } from "./header-characters.js";
import { DatasetFault, problem, type Delimiter, type ReportBuilder } from "./report.js";

// Reading the user's CSV as spreadsheets and statistics packages write it: UTF-8 with or without BOM, ',', ';' or tab,
// CRLF or LF, quoted fields. Row numbers are those a spreadsheet shows (header = 1), blank lines included.

export interface CsvTable {
  header: string[];
  /** Data rows; rows[i] is spreadsheet row i + 2. Blank lines are kept as null so numbering holds. */
  rows: Array<string[] | null>;
  delimiter: Delimiter;
  bom: boolean;
}

/** The CSV is read whole; past this it is refused rather than risk the server's memory. */
export const MAX_CSV_BYTES = 256 * 1024 * 1024;

/**
 * The most data rows a table may have. The table is held whole while it is checked, split and written: a 12-column
 * table peaked at 1.0 GB for 400,000 rows and 1.5 GB for 1,000,000 (bench/ingest/table-rows.ts); past this it is
 * refused with the limit named, and the parser stops reading there.
 */
export const MAX_TABLE_ROWS = 1_000_000;

export const sheetRow = (index: number) => index + 2;

/** Counts ',', ';' and tabs outside quotes on the first line; the most frequent one is the delimiter (',' on a tie). */
export function sniffDelimiter(text: string): Delimiter {
  const counts = { ",": 0, ";": 0, "\t": 0 };
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === "\n" || ch === "\r")) break;
    else if (!quoted && (ch === "," || ch === ";" || ch === "\t")) counts[ch]++;
  }
  let best: Delimiter = ",";
  for (const d of [";", "\t"] as const) if (counts[d] > counts[best]) best = d;
  return best;
}

// The same numbers as /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/, written so that a digit run has one way to match:
// with the optional point absent, `\d+\.?\d*` split a long run of digits every way (quadratic in a cell's length).
const NUMBER = /^[+-]?(\d+(?:\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DECIMAL_COMMA = /^[+-]?\d+,\d+$/;

/**
 * Written for "no value" in clinical exports (R and pandas write NA / NaN, UCI files ?, SPSS-style exports .); compared
 * case-insensitively. A data column of numbers with some of these is numeric with missing values, not categorical.
 * Kept in step with MISSING_MARKERS in pipelines/builder_pipelines/tabular/table.py.
 */
export const MISSING_MARKERS: ReadonlySet<string> = new Set(["na", "n/a", "nan", "?", "null", "none", "missing", ".", "-"]);
export const isMissingMarker = (value: string) => MISSING_MARKERS.has(value.trim().toLowerCase());

/**
 * How a column's non-empty values read: "numeric" when each is a number or a missing-value marker and at least one
 * is a number (markers counts those), else "categorical".
 */
export function numericOrNot(present: string[], delimiter: Delimiter): { numeric: boolean; numbers: number[]; markers: number } {
  const numbers: number[] = [];
  let markers = 0;
  for (const v of present) {
    const n = parseNumber(v, delimiter);
    if (n !== null) numbers.push(n);
    else if (isMissingMarker(v)) markers++;
    else return { numeric: false, numbers: [], markers: 0 };
  }
  return { numeric: numbers.length > 0, numbers, markers };
}

/** A number as written in the CSV; where ',' is not the delimiter a decimal comma (3,5) is accepted too. */
export function parseNumber(value: string, delimiter: Delimiter): number | null {
  const v = value.trim();
  if (NUMBER.test(v)) return Number(v);
  if (delimiter !== "," && DECIMAL_COMMA.test(v)) return Number(v.replace(",", "."));
  return null;
}

/**
 * The file's text: UTF-8 (BOM or not), UTF-16 with its BOM (Excel's "Unicode text"), or else Windows-1252, which is
 * what Excel's plain "CSV" writes on Western Windows (accented names such as 'Sí' are not UTF-8 there). That last one
 * is a guess, so the report says it; a file with NUL bytes is binary, not text, and refused.
 */
function decodeCsvText(buf: Buffer, report: ReportBuilder, csvPath: string): { text: string; bom: boolean } {
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
    return { text: new TextDecoder(buf[0] === 0xff ? "utf-16le" : "utf-16be").decode(buf.subarray(2)), bom: true };
  }
  const bom = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bom ? buf.subarray(3) : buf), bom };
  } catch {
    if (buf.includes(0)) {
      throw new DatasetFault("csv_encoding", problem("dataset.csv_encoding", { path: csvPath }), {
        path: csvPath,
      });
    }
    report.warn("csv_encoding_guessed", problem("dataset.csv_encoding_guessed", { path: csvPath }), { path: csvPath });
    return { text: new TextDecoder("windows-1252").decode(buf), bom: false };
  }
}

/**
 * Excel writes a formatted but empty cell right of the table as one more column with no name and no values in any
 * row: such trailing columns are dropped (records are changed in place). A named or filled column is kept.
 */
function dropEmptyTrailingColumns(records: string[][]): void {
  const header = records[0];
  const empty = (col: number) => {
    for (let i = 1; i < records.length; i++) if ((records[i][col] ?? "") !== "") return false;
    return true;
  };
  while (header.length > 1 && header[header.length - 1] === "" && empty(header.length - 1)) {
    header.pop();
    for (let i = 1; i < records.length; i++) if (records[i].length > header.length) records[i].length = header.length;
  }
}

export function parseCsvText(buf: Buffer, report: ReportBuilder, csvPath: string, maxRows = MAX_TABLE_ROWS): CsvTable {
  const { text, bom } = decodeCsvText(buf, report, csvPath);
  const delimiter = sniffDelimiter(text);
  let records: string[][];
  try {
    // `to`: the header, the most rows allowed and one more (to know there are more); nothing past that is parsed.
    records = parse(text, {
      delimiter,
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: false,
      trim: true,
      to: maxRows + 2,
    });
  } catch (err) {
    const e = err as { message: string; lines?: number };
    throw new DatasetFault("csv_malformed", problem("dataset.csv_malformed", { path: csvPath, line: e.lines ?? "?", why: e.message }), {
      path: csvPath,
      row: e.lines,
    });
  }
  if (records.length === 0) throw new DatasetFault("csv_empty", problem("dataset.csv_empty", { path: csvPath }), { path: csvPath });
  if (records.length > maxRows + 1) {
    throw new DatasetFault("csv_too_many_rows", msg("dataset.csv_too_many_rows", { path: csvPath, max: maxRows.toLocaleString("en-US") }), {
      path: csvPath,
      row: maxRows + 2,
    });
  }
  dropEmptyTrailingColumns(records);
  const header = records[0];
  nameUnnamedIdColumn(header, report, csvPath);
  const seen = new Map<string, number>();
  header.forEach((name, i) => {
    if (name === "") report.error("csv_header_empty", problem("dataset.csv_header_empty", { number: i + 1 }), { row: 1, path: csvPath });
    else if (seen.has(name))
      report.error("csv_header_duplicate", problem("dataset.csv_header_duplicate", { name }), {
        row: 1,
        column: name,
        path: csvPath,
      });
    seen.set(name, i);
    const found = headerCharacterProblems(name);
    if (found.length) {
      const [first] = found;
      report.warn(
        "csv_header_control_character",
        found.length === 1
          ? problem("dataset.csv_header_character", { number: i + 1, kind: first.kind, char: first.char })
          : problem("dataset.csv_header_characters", { number: i + 1, kind: first.kind, char: first.char, more: found.length - 1 }),
        { row: 1, column: name, path: csvPath },
      );
    }
  });
  if (header.length > 1 && header.every((h) => h !== "" && parseNumber(h, delimiter) !== null)) {
    report.error("csv_header_missing", problem("dataset.csv_header_missing"), { row: 1, path: csvPath });
  }
  const rows: Array<string[] | null> = [];
  for (let i = 1; i < records.length; i++) {
    const r = records[i];
    // A line of delimiters only (",,,") is how spreadsheets write an empty but formatted row: blank, like an empty line.
    if (r.every((v) => v === "")) {
      rows.push(null);
      continue;
    }
    if (r.length !== header.length) {
      report.error("csv_row_length", problem("dataset.csv_row_length", { row: i + 1, fields: r.length, header: header.length }), {
        row: i + 1,
        path: csvPath,
      });
    }
    rows.push(r);
  }
  // Trailing blank lines are not rows a user would count.
  while (rows.length && rows[rows.length - 1] === null) rows.pop();
  if (rows.every((r) => r === null)) report.error("csv_no_rows", problem("dataset.csv_no_rows", { path: csvPath }), { path: csvPath });
  return { header, rows, delimiter, bom };
}

/**
 * R's write.csv and pandas' to_csv (index kept) leave column 1's name empty: it holds their row names. Column 1 is
 * the patient id by position and never chosen by name, so it gets one ('patient_id', or 'patient_id_2', ... when a
 * column already has it) and the report says so; an empty name anywhere else is still refused.
 */
function nameUnnamedIdColumn(header: string[], report: ReportBuilder, csvPath: string): void {
  if (header.length < 2 || header[0] !== "") return;
  let name = "patient_id";
  for (let n = 2; header.includes(name); n++) name = `patient_id_${n}`;
  header[0] = name;
  report.warn("csv_id_unnamed", problem("dataset.csv_id_unnamed", { name }), { row: 1, column: name, path: csvPath });
}

export async function readCsvFile(file: string, report: ReportBuilder, csvPath: string): Promise<CsvTable> {
  const st = await fs.promises.stat(file);
  if (st.size > MAX_CSV_BYTES)
    throw new DatasetFault("csv_too_large", problem("dataset.csv_too_large", { path: csvPath, max: MAX_CSV_BYTES }), { path: csvPath });
  return parseCsvText(await fs.promises.readFile(file), report, csvPath);
}

/** Index of each requested column; reports the missing ones (suggesting a near match). */
export function resolveColumns(
  table: CsvTable,
  wanted: string[],
  role: "label" | "data" | "images" | "split" | "subgroup" | "detection",
  report: ReportBuilder,
  csvPath: string,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const name of wanted) {
    const i = table.header.indexOf(name);
    if (i >= 0) {
      out.set(name, i);
      continue;
    }
    const near = table.header.find((h) => h.toLowerCase().replace(/[\s_-]/g, "") === name.toLowerCase().replace(/[\s_-]/g, ""));
    const columns = table.header.join(", ");
    report.error(
      "column_missing",
      near
        ? problem("dataset.column_missing_near", { role, name, near, columns })
        : problem("dataset.column_missing", { role, name, columns }),
      { row: 1, column: name, path: csvPath },
    );
  }
  return out;
}
