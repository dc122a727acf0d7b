import type { Model } from "../api/types";

// Filling the Try-it form of a table model by hand: a whole pasted CSV row, and values far outside what the model
// saw in training. Kept outside React so the rules are tested directly (test/unit/web-row-input.test.ts).

export type InputColumn = NonNullable<Model["inputs"]["columns"]>[number];

/** Why a pasted row cannot be used: a reason, not a sentence (the form words it, tryit catalog try.paste.<kind>). */
export type PasteProblem =
  | { kind: "tooManyLines"; lines: number }
  | { kind: "headerMismatch"; header: number; row: number }
  | { kind: "headerMissing"; columns: string }
  | { kind: "wrongCount"; count: number; expected: number; names: string }
  | { kind: "notNumber" | "notNumberCode"; column: string; value: string };

export type PastedRow = { ok: true; values: string[] } | { ok: false; problem: PasteProblem };

const MISSING = new Set(["", "na", "nan", "?", "null", "none"]);

/**
 * A pasted row split into the form's fields, or why it cannot be; `null` when the text is a single value (an
 * ordinary paste into one field). Accepts comma, semicolon or tab separated values (a spreadsheet copies tabs; a
 * Spanish Excel writes "14,2;19,1", so with semicolons a decimal comma is read as a point), and the header line
 * with the row, which is then matched to the columns by name: a row copied from the training CSV, patient id and
 * label included, fills the right fields.
 */
export function parsePastedRow(text: string, columns: InputColumn[]): PastedRow | null {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (lines.length === 0) return null;
  const separator = lines[0].includes("\t") ? "\t" : lines[0].includes(";") ? ";" : lines[0].includes(",") ? "," : null;
  if (separator === null && lines.length === 1) return null;
  const split = (line: string) => (separator === null ? [line] : line.split(separator)).map((cell) => unquote(cell.trim()));
  const names = columns.map((c) => c.name);
  if (lines.length > 2) return { ok: false, problem: { kind: "tooManyLines", lines: lines.length } };

  let cells: string[];
  if (lines.length === 2) {
    const header = split(lines[0]);
    const row = split(lines[1]);
    if (row.length !== header.length) return { ok: false, problem: { kind: "headerMismatch", header: header.length, row: row.length } };
    const at = names.map((name) => header.findIndex((h) => h === name || h.toLowerCase() === name.toLowerCase()));
    const absent = names.filter((_, i) => at[i] === -1);
    if (absent.length) return { ok: false, problem: { kind: "headerMissing", columns: absent.map((n) => `“${n}”`).join(", ") } };
    cells = at.map((i) => row[i]);
  } else {
    cells = split(lines[0]);
    if (cells.length !== columns.length) {
      return { ok: false, problem: { kind: "wrongCount", count: cells.length, expected: columns.length, names: names.join(", ") } };
    }
  }

  const values: string[] = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = separator === ";" ? cells[i].replace(",", ".") : cells[i];
    if (MISSING.has(cell.toLowerCase())) {
      values.push("");
      continue;
    }
    if (!Number.isFinite(Number(cell))) {
      const kind = columns[i].type === "categorical" ? "notNumberCode" : "notNumber";
      return { ok: false, problem: { kind, column: names[i], value: cells[i] } };
    }
    values.push(cell);
  }
  return { ok: true, values };
}

function unquote(cell: string): string {
  return cell.length >= 2 && cell.startsWith('"') && cell.endsWith('"') ? cell.slice(1, -1).replace(/""/g, '"') : cell;
}

/** A reason, not a sentence: the form words it in the dashboard's language (tryit catalog, try.<kind>). */
export type RangeProblem = { kind: "outsideRange"; min: number; max: number } | { kind: "unknownCode"; max: number };

/**
 * Why a value should not be trusted as the model will read it, or null: a number outside the range of the training
 * data (a model says nothing reliable about glucose 999 or age -40), or a category code the model does not have.
 */

export function outOfRange(column: InputColumn, raw: string): RangeProblem | null {
  if (raw.trim() === "") return null;
  const v = Number(raw);
  if (!Number.isFinite(v)) return null;
  if (column.categories !== undefined) {
    return Number.isInteger(v) && v >= 0 && v < column.categories ? null : { kind: "unknownCode", max: column.categories - 1 };
  }
  if (column.min === undefined || column.max === undefined) return null;
  if (v >= column.min && v <= column.max) return null;
  return { kind: "outsideRange", min: column.min, max: column.max };
}
