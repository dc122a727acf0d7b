import { numericOrNot, parseNumber, resolveColumns, sheetRow, type CsvTable } from "./csv.js";
import { locateImage, pathCharProblem } from "./images.js";
import { problem, type ReportBuilder } from "./report.js";
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
    if (!task.images_col) report.error("images_col_missing", problem("dataset.images_col_missing"));
    else imageIdx = resolveColumns(t, [task.images_col], "images", report, csvPath).get(task.images_col) ?? null;
  }
  let splitIdx: number | null = null;
  if (task.split_col) splitIdx = resolveColumns(t, [task.split_col], "split", report, csvPath).get(task.split_col) ?? null;
  // Subgroup columns (the test performance is reported by them): any other column, a feature or not.
  const subgroupCols = task.subgroup_cols ?? [];
  const subgroups = resolveColumns(t, subgroupCols, "subgroup", report, csvPath);
  for (const name of subgroupCols) {
    if (name === idCol)
      report.error("column_role_conflict", problem("dataset.id_as_subgroup", { name }), {
        column: name,
        row: 1,
      });
  }
  if (task.inputs === "table" && dataCols.length === 0) report.error("data_cols_missing", problem("dataset.data_cols_missing"));
  for (const name of [...task.label_cols, ...dataCols, ...(task.images_col ? [task.images_col] : [])]) {
    if (name === idCol)
      report.error("column_role_conflict", problem("dataset.id_as_input", { name }), {
        column: name,
        row: 1,
      });
  }
  for (const name of dataCols) {
    if (task.label_cols.includes(name))
      report.error("column_role_conflict", problem("dataset.label_and_data", { name }), { column: name, row: 1 });
  }
  const split = task.split_col;
  if (split && [idCol, ...task.label_cols, ...dataCols, task.images_col].includes(split)) {
    report.error("column_role_conflict", problem("dataset.split_col_conflict", { name: split }), { column: split, row: 1 });
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
    if (patient === "")
      report.error("patient_id_missing", problem("dataset.patient_id_missing", { row, column: idCol }), { row, column: idCol });
    // An unlabelled case cannot teach or test a supervised model, but it does not make the others wrong: it is left out.
    const unlabelled = labelIdx.find((li) => values[li] === "");
    if (unlabelled !== undefined) {
      report.warn("label_missing", problem("dataset.label_missing", { row, column: t.header[unlabelled] }), {
        row,
        column: t.header[unlabelled],
      });
      return;
    }
    for (const di of dataIdx) {
      if (values[di] === "")
        report.error("missing_value", problem("dataset.missing_value", { row, column: t.header[di] }), { row, column: t.header[di] });
    }
    const r: TableRow = { row, values, patient };
    if (imageIdx !== null) {
      const col = t.header[imageIdx];
      const value = values[imageIdx];
      if (value === "") {
        report.error("image_path_missing", problem("dataset.image_path_missing", { row, column: col }), { row, column: col });
      } else {
        const bad = pathCharProblem(value);
        if (bad) {
          report.error(
            "image_path_character",
            problem("dataset.image_path_character", {
              path: value,
              kind: bad.kind,
              char: bad.char,
              codepoint: bad.codepoint,
              position: bad.position,
              suggestion: bad.suggestion,
            }),
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
            found.near
              ? problem("dataset.image_not_found_near", { image: value, row, near: found.near })
              : problem("dataset.image_not_found_row", { image: value, row }),
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
        report.warn("missing_values", problem("dataset.missing_values", { column: name, missing: read.markers, rows: rows.length }), {
          column: name,
        });
      }
      if (min === max)
        report.warn("constant_column", problem("dataset.constant_number", { column: name, value: min }), {
          column: name,
        });
    } else {
      const distinct = new Set(present);
      features.push({ name, type: "categorical", categories: distinct.size, missing: rows.length - present.length });
      if (distinct.size === 1)
        report.warn("constant_column", problem("dataset.constant_column", { column: name }), {
          column: name,
        });
      if (present.length && distinct.size > 0.5 * present.length && distinct.size > 50) {
        report.warn(
          "categorical_high_cardinality",
          problem("dataset.categorical_high_cardinality", { column: name, distinct: distinct.size }),
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
      problem("dataset.subgroup_col_free_text", { column: t.header[idx], distinct, max: SUBGROUP_FREE_TEXT_DISTINCT }),
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
          report.error("label_not_numeric", problem("dataset.label_not_numeric", { column: col, row: r.row, value: r.values[li] }), {
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
        report.error("too_few_classes", problem("dataset.one_value_only", { column: col }), { column: col });
      continue;
    }
    const classes = Object.keys(perClass);
    if (classes.length < 2) {
      report.error(
        "too_few_classes",
        classes.length
          ? problem("dataset.too_few_classes_single", { column: col, value: classes[0] })
          : problem("dataset.too_few_classes_empty", { column: col }),
        { column: col },
      );
    }
    if (labelIdx.length > 1 && classes.some((c) => parseNumber(c, t.delimiter) !== 0 && parseNumber(c, t.delimiter) !== 1)) {
      report.error(
        "multilabel_not_binary",
        problem("dataset.multilabel_not_binary", {
          column: col,
          values: classes
            .slice(0, 5)
            .map((c) => `'${c}'`)
            .join(", "),
        }),
        { column: col },
      );
    }
    if (ctx.willSplit) {
      for (const [cls, set] of patients) {
        if (set.size < MIN_PATIENTS_PER_CLASS) {
          report.error(
            "class_too_small",
            problem("dataset.class_too_small", { class: cls, column: col, count: set.size, min: MIN_PATIENTS_PER_CLASS }),
            { column: col },
          );
        }
      }
    }
    if (classes.length > 50 && classes.every((c) => parseNumber(c, t.delimiter) !== null)) {
      report.warn("many_classes", problem("dataset.many_classes", { column: col, distinct: classes.length }), { column: col });
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
          problem("dataset.patient_mixed_labels", {
            patient: r.patient,
            first: first.label,
            first_row: first.row,
            label: v,
            row: r.row,
            column: col,
          }),
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
      report.warn("duplicate_row", problem("dataset.duplicate_row", { row: r.row, first }), { row: r.row });
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
        problem("dataset.image_conflicting_labels", {
          image: r.values[imageIdx],
          first: prev.labels,
          first_row: prev.row,
          label: labels,
          row: r.row,
        }),
        {
          row: r.row,
          column: t.header[imageIdx],
          path: r.values[imageIdx],
        },
      );
    } else {
      report.warn("image_repeated", problem("dataset.image_repeated", { image: r.values[imageIdx], first_row: prev.row, row: r.row }), {
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
