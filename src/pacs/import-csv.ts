import { parse } from "csv-parse/sync";
import { ApiError, detail, msg, type Message } from "../errors.js";

// The CSV of a PACS import (docs/pacs.md#building-a-dataset-from-the-pacs): its UID column, the optional pseudonym
// column, and the columns copied into the dataset as they are. Refused with the field and row named.

export interface PacsImportRequest {
  csv: string;
  zip_gcloud: string;
  uid_col: string;
  patient_col?: string | null;
}

export const IMAGE_COL = "image";
export const PATIENT_COL = "patient_id";

export interface CsvTable {
  restHeader: string[];
  rows: Array<{ uid: string; patient: string | null; rest: string[] }>;
}

function bad(field: string, problem: Message): ApiError {
  return new ApiError(400, "invalid_request", msg("request.field_problem", { field, problem }), [detail(field, problem)]);
}

export function readCsv(req: PacsImportRequest): CsvTable {
  let records: string[][];
  try {
    records = parse(req.csv.replace(/^\uFEFF/, ""), { relax_column_count: false, skip_empty_lines: true, trim: true });
  } catch (err) {
    throw bad("csv", msg("pacs.csv_unreadable", { why: (err as Error).message }));
  }
  if (records.length < 2) throw bad("csv", msg("pacs.csv_too_short"));
  const header = records[0];
  const uidAt = header.indexOf(req.uid_col);
  if (uidAt < 0) throw bad("uid_col", msg("pacs.no_uid_column", { column: req.uid_col, columns: header.join(", ") }));
  const patientAt = req.patient_col ? header.indexOf(req.patient_col) : -1;
  if (req.patient_col && patientAt < 0) throw bad("patient_col", msg("pacs.no_column", { column: req.patient_col }));
  for (const reserved of [PATIENT_COL, IMAGE_COL])
    if (header.some((h, i) => h === reserved && i !== uidAt && i !== patientAt))
      throw bad("csv", msg("pacs.reserved_column", { column: reserved }));
  const keep = header.map((_, i) => i).filter((i) => i !== uidAt && i !== patientAt);
  const rows = records.slice(1).map((r, i) => {
    const uid = r[uidAt];
    if (!uid) throw bad("csv", msg("pacs.empty_cell", { row: i + 1, column: req.uid_col }));
    const patient = patientAt >= 0 ? r[patientAt] || null : null;
    if (patientAt >= 0 && !patient) throw bad("csv", msg("pacs.empty_cell", { row: i + 1, column: req.patient_col ?? "" }));
    return { uid, patient, rest: keep.map((k) => r[k]) };
  });
  return { restHeader: keep.map((k) => header[k]), rows };
}

export function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}
