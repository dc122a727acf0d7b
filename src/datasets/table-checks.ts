import { numericOrNot, parseNumber, resolveColumns, sheetRow, type CsvTable } from "./csv.js";
import { locateImage, pathCharProblem } from "./images.js";
import type { ReportBuilder } from "./report.js";
import type { DatasetTask } from "./types.js";

// Checks of the CSV's content for classification and regression (task vision or data).
// Column 1 is the patient id; label_cols, images_col and data_cols name the other columns used.

export interface TableRow {
  /** Spreadsheet row number. */
  row: number;
  values: string[];
  patient: string;
  /** Image path relative to the dataset root (vision, when found). */
  image?: string;
}

export interface CheckedTable {
  idCol: string;
  header: string[];
  rows: TableRow[];
  labelIdx: number[];
  imageIdx: number | null;
  dataIdx: number[];
  /** The user's split column (split_col), when given. */
  splitIdx: number | null;
  numericData: Set<number>;
  /** Image paths (relative to root) to decode. */
  images: Set<string>;
}

/** A class needs a patient in each of train, validation and test. */
export const MIN_PATIENTS_PER_CLASS = 3;

export interface TableCheckContext {
  report: ReportBuilder;
  csvPath: string;
  task: DatasetTask;
  /** Files in the archive (full names) and the tolerated top-level folder; vision only. */
  files?: Set<string>;
  top?: string | null;
  /** Whether Builder will split the data itself (false for Retrospective, where everything is test, and when the
   * user's split_col places the patients). */
  willSplit: boolean;
}

export function checkTable(t: CsvTable, ctx: TableCheckContext): CheckedTable | null {
  const { report, csvPath, task } = ctx;
  const idCol = t.header[0];
  const labels = resolveColumns(t, task.label_cols, "label", report, csvPath);
  const dataCols = task.data_cols;
  const data = resolveColumns(t, dataCols, "data", report, csvPath);
  let imageIdx: number | null = null;
  if (task.inputs === "images") {
    if (!task.images_col) report.error("images_col_missing", "task 'vision' needs images_col: the column holding the image paths");
    else imageIdx = resolveColumns(t, [task.images_col], "images", report, csvPath).get(task.images_col) ?? null;
  }
  let splitIdx: number | null = null;
  if (task.split_col) splitIdx = resolveColumns(t, [task.split_col], "split", report, csvPath).get(task.split_col) ?? null;
  // Subgroup columns (the test performance is reported by them): any other column, a feature or not.
  const subgroupCols = task.subgroup_cols ?? [];
  const subgroups = resolveColumns(t, subgroupCols, "subgroup", report, csvPath);
  for (const name of subgroupCols) {
    if (name === idCol)
      report.error("column_role_conflict", `'${name}' is column 1, the patient id; it cannot be a subgroup column`, {
        column: name,
        row: 1,
      });
  }
  if (task.inputs === "table" && dataCols.length === 0)
    report.error("data_cols_missing", "task 'data' needs data_cols: the feature columns to learn from");
  for (const name of [...task.label_cols, ...dataCols, ...(task.images_col ? [task.images_col] : [])]) {
    if (name === idCol)
      report.error("column_role_conflict", `'${name}' is column 1, the patient id; it cannot also be a label, image or data column`, {
        column: name,
        row: 1,
      });
  }
  for (const name of dataCols) {
    if (task.label_cols.includes(name))
      report.error("column_role_conflict", `'${name}' is both a label and a data column`, { column: name, row: 1 });
  }
  const split = task.split_col;
  if (split && [idCol, ...task.label_cols, ...dataCols, task.images_col].includes(split)) {
    report.error(
      "column_role_conflict",
      `'${split}' is the split column; it cannot also be the patient id, a label, image or data column`,
      { column: split, row: 1 },
    );
  }
  if (labels.size !== task.label_cols.length || data.size !== dataCols.length || (task.inputs === "images" && imageIdx === null))
    return null;
  if (split && splitIdx === null) return null;
  if (subgroups.size !== subgroupCols.length) return null;

  const labelIdx = task.label_cols.map((c) => labels.get(c)!);
  const dataIdx = dataCols.map((c) => data.get(c)!);
  const rows: TableRow[] = [];
  const images = new Set<string>();
  const lowerIndex = ctx.files ? new Map([...ctx.files].map((f) => [f.toLowerCase(), f])) : undefined;
  t.rows.forEach((values, i) => {
    if (!values || values.length !== t.header.length) return; // blank line, or already reported as csv_row_length
    const row = sheetRow(i);
    const patient = values[0];
    if (patient === "") report.error("patient_id_missing", `row ${row} has no patient id in column 1 ('${idCol}')`, { row, column: idCol });
    // An unlabelled case cannot teach or test a supervised model, but it does not make the others wrong: it is left out.
    const unlabelled = labelIdx.find((li) => values[li] === "");
    if (unlabelled !== undefined) {
      report.warn("label_missing", `row ${row} has no value in the label column '${t.header[unlabelled]}'; the row is left out`, {
        row,
        column: t.header[unlabelled],
      });
      return;
    }
    for (const di of dataIdx) {
      if (values[di] === "")
        report.error(
          "missing_value",
          `row ${row} has an empty entry in the data column '${t.header[di]}'; fill it in, write NA if the value is unknown, or remove the row`,
          { row, column: t.header[di] },
        );
    }
    const r: TableRow = { row, values, patient };
    if (imageIdx !== null) {
      const col = t.header[imageIdx];
      const value = values[imageIdx];
      if (value === "") {
        report.error("image_path_missing", `row ${row} has no image path in '${col}'`, { row, column: col });
      } else {
        const bad = pathCharProblem(value);
        if (bad) {
          report.error(
            "image_path_character",
            `the image path '${value}' contains ${bad.name} at position ${bad.position}; rename the file and its CSV entry, e.g. to '${bad.suggestion}' (letters, digits, '.', '-', '_' and '/' only)`,
            { row, column: col, path: value },
          );
        }
        const found = locateImage(value, ctx.files ?? new Set(), ctx.top ?? null, lowerIndex);
        if (found.rel) {
          r.image = found.rel;
          images.add(found.rel);
        } else {
          report.error(
            "image_not_found",
            `the image '${value}' (row ${row}) is not in the zip${found.near ? `; '${found.near}' exists (names are case-sensitive)` : ""}`,
            { row, column: col, path: value },
          );
        }
      }
    }
    rows.push(r);
  });
  dropRepeatedRows(rows, report);

  const numericData = checkFeatures(t, dataIdx, rows, report);
  for (const name of subgroupCols) checkSubgroupColumn(t, subgroups.get(name)!, rows, report, numericData);
  checkLabels(t, labelIdx, rows, ctx);
  checkDuplicates(t, rows, labelIdx, imageIdx, report);
  summarise(t, rows, labelIdx, imageIdx, report);
  return { idCol, header: t.header, rows, labelIdx, imageIdx, dataIdx, splitIdx, numericData, images };
}

/**
 * Numeric when every non-empty entry is a number or a missing-value marker (NA, ?, ...), with at least one number;
 * otherwise categorical. Markers are counted as missing and the models learn with the gaps (the pipeline reads
 * them as NaN); the report says how many.
 */
function checkFeatures(t: CsvTable, dataIdx: number[], rows: TableRow[], report: ReportBuilder): Set<number> {
  const numeric = new Set<number>();
  const features: NonNullable<ReportBuilder["summary"]["features"]> = [];
  for (const di of dataIdx) {
    const present = rows.map((r) => r.values[di]).filter((v) => v !== "");
    const read = numericOrNot(present, t.delimiter);
    const name = t.header[di];
    if (read.numeric) {
      numeric.add(di);
      let min = Infinity;
      let max = -Infinity;
      for (const n of read.numbers) {
        if (n < min) min = n;
        if (n > max) max = n;
      }
      features.push({ name, type: "numeric", min, max, missing: rows.length - present.length + read.markers });
      if (read.markers) {
        report.warn(
          "missing_values",
          `the data column '${name}' has no value in ${read.markers} of ${rows.length} rows (written as NA, ? or similar); the models learn with these gaps, and predictions may send null for it`,
          { column: name },
        );
      }
      if (min === max)
        report.warn("constant_column", `the data column '${name}' holds the same value (${min}) in every row; it cannot help the model`, {
          column: name,
        });
    } else {
      const distinct = new Set(present);
      features.push({ name, type: "categorical", categories: distinct.size, missing: rows.length - present.length });
      if (distinct.size === 1)
        report.warn("constant_column", `the data column '${name}' holds the same value in every row; it cannot help the model`, {
          column: name,
        });
      if (present.length && distinct.size > 0.5 * present.length && distinct.size > 50) {
        report.warn(
          "categorical_high_cardinality",
          `the data column '${name}' is not numeric and has ${distinct.size} distinct values; is it an identifier?`,
          { column: name },
        );
      }
    }
  }
  if (dataIdx.length) report.summary.features = features;
  return numeric;
}

/** The most distinct values a non-numeric subgroup column may hold before it reads as free text (pipelines: the same). */
export const SUBGROUP_FREE_TEXT_DISTINCT = 30;

/**
 * A subgroup column: numbers are normalised like features (decimal commas), and a non-numeric column with many distinct
 * values (free text, an identifier) is warned about: the pipeline skips it rather than print its values.
 */
function checkSubgroupColumn(t: CsvTable, idx: number, rows: TableRow[], report: ReportBuilder, numeric: Set<number>): void {
  const present = rows.map((r) => r.values[idx]).filter((v) => v !== "");
  if (numericOrNot(present, t.delimiter).numeric) {
    numeric.add(idx);
    return;
  }
  const distinct = new Set(present.map((v) => v.trim())).size;
  if (distinct > SUBGROUP_FREE_TEXT_DISTINCT) {
    report.warn(
      "subgroup_col_free_text",
      `the subgroup column '${t.header[idx]}' has ${distinct} distinct values; it looks like free text or an identifier, not a grouping, and will be left out of the subgroup results (at most ${SUBGROUP_FREE_TEXT_DISTINCT} categories; numbers are cut in quartiles)`,
      { column: t.header[idx] },
    );
  }
}

function checkLabels(t: CsvTable, labelIdx: number[], rows: TableRow[], ctx: TableCheckContext): void {
  const { report, task } = ctx;
  const counts: Record<string, Record<string, number>> = {};
  for (const li of labelIdx) {
    const col = t.header[li];
    const perClass: Record<string, number> = {};
    const patients = new Map<string, Set<string>>();
    for (const r of rows) {
      const v = r.values[li];
      if (v === "") continue;
      perClass[v] = (perClass[v] ?? 0) + 1;
      if (!patients.has(v)) patients.set(v, new Set());
      patients.get(v)!.add(r.patient);
    }
    counts[col] = perClass;
    if (task.family === "regression") {
      let min = Infinity;
      let max = -Infinity;
      for (const r of rows) {
        if (r.values[li] === "") continue;
        const n = parseNumber(r.values[li], t.delimiter);
        if (n === null) {
          report.error("label_not_numeric", `regression (model_type 1) needs numbers in '${col}'; row ${r.row} has '${r.values[li]}'`, {
            row: r.row,
            column: col,
          });
        } else {
          min = Math.min(min, n);
          max = Math.max(max, n);
        }
      }
      if (min <= max) report.summary.label_range = { min, max };
      if (new Set(rows.map((r) => r.values[li])).size < 2)
        report.error("too_few_classes", `the label column '${col}' holds one value only; there is nothing to learn`, { column: col });
      continue;
    }
    const classes = Object.keys(perClass);
    if (classes.length < 2) {
      report.error(
        "too_few_classes",
        `classification needs at least 2 classes; '${col}' has ${classes.length}${classes.length ? ` ('${classes[0]}')` : ""}`,
        { column: col },
      );
    }
    if (labelIdx.length > 1 && classes.some((c) => parseNumber(c, t.delimiter) !== 0 && parseNumber(c, t.delimiter) !== 1)) {
      report.error(
        "multilabel_not_binary",
        `with several label columns each must hold 0 or 1 (present or absent); '${col}' holds ${classes
          .slice(0, 5)
          .map((c) => `'${c}'`)
          .join(", ")}`,
        { column: col },
      );
    }
    if (ctx.willSplit) {
      for (const [cls, set] of patients) {
        if (set.size < MIN_PATIENTS_PER_CLASS) {
          report.error(
            "class_too_small",
            `class '${cls}' of '${col}' has ${set.size} patient${set.size === 1 ? "" : "s"}; at least ${MIN_PATIENTS_PER_CLASS} are needed to place one in each of train, validation and test`,
            { column: col },
          );
        }
      }
    }
    if (classes.length > 50 && classes.every((c) => parseNumber(c, t.delimiter) !== null)) {
      report.warn(
        "many_classes",
        `'${col}' has ${classes.length} distinct numeric values; if it is a measurement, use regression (model_type 1)`,
        { column: col },
      );
    }
    // A patient's rows should agree (one diagnosis per patient): different labels are allowed but suspicious.
    const byPatient = new Map<string, { label: string; row: number }>();
    for (const r of rows) {
      const v = r.values[li];
      const first = byPatient.get(r.patient);
      if (!first) byPatient.set(r.patient, { label: v, row: r.row });
      else if (first.label !== v) {
        report.warn(
          "patient_mixed_labels",
          `patient '${r.patient}' is labelled '${first.label}' on row ${first.row} and '${v}' on row ${r.row} in '${col}'`,
          { row: r.row, column: col },
        );
      }
    }
  }
  report.summary.class_counts = counts;
}

/** A row that repeats an earlier one exactly adds nothing but weight: it is left out (in place), with a warning. */
function dropRepeatedRows(rows: TableRow[], report: ReportBuilder): void {
  const seen = new Map<string, number>();
  let kept = 0;
  for (const r of rows) {
    const key = r.values.join("\u0000");
    const first = seen.get(key);
    if (first !== undefined) {
      report.warn("duplicate_row", `row ${r.row} repeats row ${first} exactly; the repeat is left out`, { row: r.row });
      continue;
    }
    seen.set(key, r.row);
    rows[kept++] = r;
  }
  rows.length = kept;
}

function checkDuplicates(t: CsvTable, rows: TableRow[], labelIdx: number[], imageIdx: number | null, report: ReportBuilder): void {
  const seenImage = new Map<string, { labels: string; row: number }>();
  for (const r of rows) {
    if (imageIdx === null || !r.image) continue;
    const labels = labelIdx.map((i) => r.values[i]).join(", ");
    const prev = seenImage.get(r.image);
    if (!prev) seenImage.set(r.image, { labels, row: r.row });
    else if (prev.labels !== labels) {
      report.error(
        "image_conflicting_labels",
        `the image '${r.values[imageIdx]}' is labelled '${prev.labels}' on row ${prev.row} and '${labels}' on row ${r.row}`,
        {
          row: r.row,
          column: t.header[imageIdx],
          path: r.values[imageIdx],
        },
      );
    } else {
      report.warn("image_repeated", `the image '${r.values[imageIdx]}' is listed on rows ${prev.row} and ${r.row}`, {
        row: r.row,
        column: t.header[imageIdx],
        path: r.values[imageIdx],
      });
    }
  }
}

function summarise(t: CsvTable, rows: TableRow[], _labelIdx: number[], imageIdx: number | null, report: ReportBuilder): void {
  const perPatient = new Map<string, Set<string>>();
  for (const r of rows) {
    if (!perPatient.has(r.patient)) perPatient.set(r.patient, new Set());
    if (r.image) perPatient.get(r.patient)!.add(r.image);
  }
  report.summary.rows = rows.length;
  report.summary.patients = perPatient.size;
  if (imageIdx !== null) {
    const n = [...perPatient.values()].map((s) => s.size);
    report.summary.images = new Set(rows.map((r) => r.image).filter(Boolean)).size;
    // reduce, not Math.min(...n): spreading 100,000+ arguments overflows the stack.
    report.summary.images_per_patient = n.length
      ? {
          min: n.reduce((a, b) => Math.min(a, b)),
          max: n.reduce((a, b) => Math.max(a, b)),
          mean: Math.round((n.reduce((a, b) => a + b, 0) / n.length) * 100) / 100,
        }
      : { min: 0, max: 0, mean: 0 };
  }
  void t;
}
