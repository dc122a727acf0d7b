import { parse } from "csv-parse/sync";
import { ApiError } from "../errors.js";

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

function bad(field: string, message: string): ApiError {
  return new ApiError(400, "invalid_request", `${field}: ${message}`, [{ field, message }]);
}

export function readCsv(req: PacsImportRequest): CsvTable {
  let records: string[][];
  try {
    records = parse(req.csv.replace(/^\uFEFF/, ""), { relax_column_count: false, skip_empty_lines: true, trim: true });
  } catch (err) {
    throw bad("csv", `cannot be read as CSV: ${(err as Error).message}`);
  }
  if (records.length < 2) throw bad("csv", "needs a header row and at least one row of UIDs");
  const header = records[0];
  const uidAt = header.indexOf(req.uid_col);
  if (uidAt < 0) throw bad("uid_col", `the CSV has no column '${req.uid_col}' (its columns: ${header.join(", ")})`);
  const patientAt = req.patient_col ? header.indexOf(req.patient_col) : -1;
  if (req.patient_col && patientAt < 0) throw bad("patient_col", `the CSV has no column '${req.patient_col}'`);
  for (const reserved of [PATIENT_COL, IMAGE_COL])
    if (header.some((h, i) => h === reserved && i !== uidAt && i !== patientAt))
      throw bad("csv", `the column '${reserved}' is the one Builder writes; rename yours`);
  const keep = header.map((_, i) => i).filter((i) => i !== uidAt && i !== patientAt);
  const rows = records.slice(1).map((r, i) => {
    const uid = r[uidAt];
    if (!uid) throw bad("csv", `row ${i + 1}: the column '${req.uid_col}' is empty`);
    const patient = patientAt >= 0 ? r[patientAt] || null : null;
    if (patientAt >= 0 && !patient) throw bad("csv", `row ${i + 1}: the column '${req.patient_col}' is empty`);
    return { uid, patient, rest: keep.map((k) => r[k]) };
  });
  return { restHeader: keep.map((k) => header[k]), rows };
}

export function csvField(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}
