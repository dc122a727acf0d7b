import { tr } from "./format";

// The Monitoring tab's outcome upload: a CSV with a request_id column (the x-request-id a prediction answered with)
// and a label column (the true outcome, written as in the training CSV), turned into the body of
// POST /v1/models/{id}/outcomes. Read character by character (no regular expression over the file: the
// house's ReDoS rule), quotes as RFC 4180 has them, a comma or a semicolon as the separator (a Spanish-locale
// spreadsheet saves with semicolons).

export interface OutcomeRow {
  request_id: string;
  label: string;
}

/** The API's limit per call (src/monitoring/outcomes.ts MAX_OUTCOMES): a larger file is sent in parts. */
export const OUTCOMES_PER_CALL = 10_000;

const REQUEST_ID_NAMES = new Set(["request_id", "x-request-id", "requestid", "id_solicitud"]);
const LABEL_NAMES = new Set(["label", "outcome", "etiqueta", "resultado", "desenlace"]);

/** Splits CSV text into rows of fields. */
export function csvRows(text: string, separator: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === separator) {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((f) => f.trim() !== ""));
}

export class OutcomesCsvError extends Error {}

/** The outcomes in a CSV; throws OutcomesCsvError naming the row or column that is wrong, in the dashboard's language. */
export function parseOutcomesCsv(text: string): OutcomeRow[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // Excel's byte-order mark
  const ends = [body.indexOf("\n"), body.indexOf("\r")].filter((i) => i >= 0);
  const firstLine = body.slice(0, ends.length ? Math.min(...ends) : body.length);
  const separator = firstLine.includes(",") || !firstLine.includes(";") ? "," : ";";
  const rows = csvRows(body, separator);
  if (rows.length === 0) throw new OutcomesCsvError(tr("monitoring:upload.empty", "The file is empty."));
  const header = rows[0].map((h) => h.trim().toLowerCase());
  const idCol = header.findIndex((h) => REQUEST_ID_NAMES.has(h));
  const labelCol = header.findIndex((h) => LABEL_NAMES.has(h));
  if (idCol < 0 || labelCol < 0)
    throw new OutcomesCsvError(
      tr("monitoring:upload.noColumns", "The first row must name the columns request_id and label; this file's first row is: {{header}}", {
        header: rows[0].join(separator).slice(0, 200),
      }),
    );
  const out: OutcomeRow[] = [];
  for (let i = 1; i < rows.length; i++) {
    const request_id = (rows[i][idCol] ?? "").trim();
    const label = (rows[i][labelCol] ?? "").trim();
    const column = !request_id ? "request_id" : !label ? "label" : null;
    if (column) throw new OutcomesCsvError(tr("monitoring:upload.emptyCell", "Row {{row}}: {{column}} is empty.", { row: i + 1, column }));
    out.push({ request_id, label });
  }
  if (out.length === 0) throw new OutcomesCsvError(tr("monitoring:upload.noRows", "The file has a header but no outcomes."));
  return out;
}
