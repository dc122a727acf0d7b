import path from "node:path";
import { parseNumber, readCsvFile, type CsvTable } from "./csv.js";
import {
  boxesFromCoco,
  boxesFromCsv,
  boxesFromVoc,
  checkBoxes,
  looksLikeCoco,
  readCoco,
  BOX_COLUMNS,
  type Box,
  type Ctx,
} from "./detection.js";
import type { DatasetArchive } from "./extract.js";
import { reportDicom } from "./dicom-summary.js";
import { inspectImages, isImageFile, type ImageInfo } from "./images.js";
import { DatasetFault, problem, type ReportBuilder } from "./report.js";
import { sampleThumbnails } from "./samples.js";
import type { SplitColumnRow } from "./split.js";
import { checkTable, type CheckedTable } from "./table-checks.js";
import { problemOf, type DatasetTask, type Problem } from "./types.js";

// From an extracted archive to checked, normalised rows: find the CSV (or VOC/COCO annotations),
// run the checks for the task, decode every image, and shape the table the pipeline reads.

export interface Analysed {
  root: string;
  idCol: string;
  imagesCol: string | null;
  labelCols: string[];
  dataCols: string[];
  classNameCol: string | null;
  problem: Problem;
  header: string[];
  rows: string[][];
  /** One entry per row: the patient and the label that stratifies the split. */
  strataRows: Array<{ patient: string; label: string }>;
  /** With split_col: one entry per row, the part it names (checked by splitFromColumn). */
  splitRows: SplitColumnRow[] | null;
}

const rel = (f: string, top: string | null) => (top && f.startsWith(`${top}/`) ? f.slice(top.length + 1) : f);
/** The archive path of a path relative to the dataset root (the inverse of rel). */
const archivePath = (r: string, top: string | null) => (top ? `${top}/${r}` : r);

/** The CSV to read: the only one, or the only one at the dataset's top level. */
export function pickCsv(files: string[], top: string | null): string | null {
  const csvs = files.filter((f) => f.toLowerCase().endsWith(".csv"));
  if (csvs.length <= 1) return csvs[0] ?? null;
  const atTop = csvs.filter((f) => !rel(f, top).includes("/"));
  if (atTop.length === 1) return atTop[0];
  throw new DatasetFault("csv_ambiguous", problem("dataset.csv_ambiguous", { files: csvs.slice(0, 5).join(", ") }));
}

export async function analyseDataset(
  ex: DatasetArchive,
  task: DatasetTask,
  report: ReportBuilder,
  /** maxDicomPixels: a larger DICOM is refused before its pixels are decoded (the serving limit, FETCH_MAX_PIXELS). */
  opts: { willSplit: boolean; maxDicomPixels: number; signal?: AbortSignal; samples?: boolean },
): Promise<Analysed | null> {
  const root = ex.topLevelFolder ? path.join(ex.dir, ex.topLevelFolder) : ex.dir;
  const files = new Set(ex.files);
  const csvPath = pickCsv(ex.files, ex.topLevelFolder);
  if (task.family === "detection") {
    // The request schema refuses split_col for detection; a direct caller gets the same answer here.
    if (task.split_col) throw new DatasetFault("split_col_unsupported", problem("dataset.split_col_unsupported"));
    return analyseDetection(ex, root, files, csvPath, task, report, opts);
  }
  if (!csvPath) throw new DatasetFault("csv_missing", problem("dataset.csv_missing"));
  report.summary.format = "csv";
  report.summary.csv_path = csvPath;
  const table = await readCsvFile(path.join(ex.dir, ...csvPath.split("/")), report, csvPath);
  report.summary.delimiter = table.delimiter;
  // With split_col the user places the patients, so the per-class minimum for Builder's own split does not apply.
  const checked = checkTable(table, { report, csvPath, task, files, top: ex.topLevelFolder, willSplit: opts.willSplit && !task.split_col });
  if (!checked) return null;
  if (task.inputs === "images") {
    await ex.extract([...checked.images].map((i) => archivePath(i, ex.topLevelFolder)));
    const sizes = await inspectImages(root, [...checked.images], opts);
    reportImages(sizes, report, checked);
    if (opts.samples && task.family === "classification")
      report.summary.samples = { [task.label_cols[0]]: await sampleThumbnails(root, checked, sizes) };
    const referenced = new Set([...checked.images]);
    const unreferenced = ex.files.filter((f) => isImageFile(f) && !referenced.has(rel(f, ex.topLevelFolder)));
    report.summary.unreferenced_images = unreferenced.length;
    if (unreferenced.length) {
      report.warn(
        "image_unreferenced",
        problem("dataset.image_unreferenced", { count: unreferenced.length, examples: unreferenced.slice(0, 3).join(", ") }),
        { path: unreferenced[0] },
      );
    }
  }
  const labelCols = task.label_cols;
  const classes = new Set(checked.rows.map((r) => r.values[checked.labelIdx[0]]));
  return {
    root,
    idCol: checked.idCol,
    imagesCol: task.images_col,
    labelCols,
    dataCols: task.data_cols,
    classNameCol: task.family === "classification" && labelCols.length === 1 ? classNameColumn(checked) : null,
    problem: problemOf(task, classes.size),
    header: checked.header,
    rows: normalisedRows(checked, table, task.family === "regression" ? checked.labelIdx : []),
    // Regression stratifies on the first label's value (quantile bins); classification on the label combination.
    strataRows: checked.rows.map((r) => ({
      patient: r.patient,
      label:
        task.family === "regression"
          ? String(parseNumber(r.values[checked.labelIdx[0]], table.delimiter) ?? 0)
          : checked.labelIdx.map((i) => r.values[i]).join("|"),
    })),
    splitRows:
      checked.splitIdx === null
        ? null
        : checked.rows.map((r) => ({
            row: r.row,
            patient: r.patient,
            value: r.values[checked.splitIdx!],
            labels: task.family === "classification" ? checked.labelIdx.map((i) => r.values[i]) : undefined,
          })),
  };
}

function reportImages(sizes: Map<string, ImageInfo>, report: ReportBuilder, checked?: CheckedTable): void {
  const firstRow = new Map<string, number>();
  for (const r of checked?.rows ?? []) if (r.image && !firstRow.has(r.image)) firstRow.set(r.image, r.row);
  let wMin = Infinity,
    wMax = 0,
    hMin = Infinity,
    hMax = 0;
  const channels: Record<string, number> = {};
  for (const [img, info] of sizes) {
    if ("error" in info) {
      report.error("image_unreadable", problem("dataset.image_unreadable", { image: img, why: info.error }), {
        path: img,
        row: firstRow.get(img),
      });
      continue;
    }
    wMin = Math.min(wMin, info.width);
    wMax = Math.max(wMax, info.width);
    hMin = Math.min(hMin, info.height);
    hMax = Math.max(hMax, info.height);
    channels[info.channels] = (channels[info.channels] ?? 0) + 1;
  }
  if (wMax > 0) report.summary.image_sizes = { width: { min: wMin, max: wMax }, height: { min: hMin, max: hMax }, channels };
  reportDicom(sizes, report);
}

/** The user's columns, with image paths made relative to the root and decimal commas turned into points. */
function normalisedRows(checked: CheckedTable, table: CsvTable, numericLabels: number[]): string[][] {
  const numeric = [...checked.numericData, ...numericLabels];
  return checked.rows.map((r) => {
    const v = [...r.values];
    if (checked.imageIdx !== null && r.image) v[checked.imageIdx] = r.image;
    for (const di of numeric) {
      const n = parseNumber(v[di], table.delimiter);
      if (n !== null && table.delimiter !== ",") v[di] = String(n);
    }
    return v;
  });
}

/** A column (not otherwise used) whose values name the class codes one-to-one, e.g. label 0/1 beside benign/malignant. */
function classNameColumn(checked: CheckedTable): string | null {
  const li = checked.labelIdx[0];
  const used = new Set([0, li, ...[checked.imageIdx, checked.splitIdx].filter((i): i is number => i !== null), ...checked.dataIdx]);
  for (let c = 0; c < checked.header.length; c++) {
    if (used.has(c)) continue;
    const fwd = new Map<string, string>();
    const back = new Map<string, string>();
    let ok = checked.rows.length > 0;
    for (const r of checked.rows) {
      const [code, name] = [r.values[li], r.values[c]];
      if (name === "" || (fwd.has(code) && fwd.get(code) !== name) || (back.has(name) && back.get(name) !== code)) {
        ok = false;
        break;
      }
      fwd.set(code, name);
      back.set(name, code);
    }
    if (ok && fwd.size >= 2 && [...back.keys()].some((n) => parseNumber(n, ",") === null)) return checked.header[c];
  }
  return null;
}

async function analyseDetection(
  ex: DatasetArchive,
  root: string,
  files: Set<string>,
  csvPath: string | null,
  task: DatasetTask,
  report: ReportBuilder,
  opts: { maxDicomPixels: number; signal?: AbortSignal },
): Promise<Analysed | null> {
  if (task.inputs !== "images") throw new DatasetFault("detection_needs_vision", problem("dataset.detection_needs_vision"));
  const ctx: Ctx = { report, files, top: ex.topLevelFolder };
  const labelCol = task.label_cols[0] ?? "label";
  let imagesCol = task.images_col ?? "image";
  let idCol = "patient_id";
  let boxes: Box[] | null;
  if (csvPath) {
    report.summary.format = "csv";
    report.summary.csv_path = csvPath;
    const table = await readCsvFile(path.join(ex.dir, ...csvPath.split("/")), report, csvPath);
    report.summary.delimiter = table.delimiter;
    if (!task.images_col) {
      report.error("images_col_missing", problem("dataset.images_col_missing"));
      return null;
    }
    idCol = table.header[0];
    imagesCol = task.images_col;
    boxes = boxesFromCsv(table, imagesCol, labelCol, ctx, csvPath);
  } else {
    const xmls = ex.files.filter((f) => f.toLowerCase().endsWith(".xml"));
    const jsons = ex.files.filter((f) => f.toLowerCase().endsWith(".json"));
    if (xmls.length) {
      report.summary.format = "voc";
      boxes = await boxesFromVoc(xmls, ex.dir, ctx);
    } else {
      let coco: readonly [string, unknown] | undefined;
      for (const j of jsons) {
        const value = await readCoco(path.join(ex.dir, ...j.split("/")), j);
        if (looksLikeCoco(value)) {
          coco = [j, value];
          break;
        }
      }
      if (!coco) throw new DatasetFault("annotations_missing", problem("dataset.annotations_missing"));
      report.summary.format = "coco";
      boxes = boxesFromCoco(coco[1] as Parameters<typeof boxesFromCoco>[0], coco[0], ctx);
    }
  }
  if (!boxes) return null;
  const images = [...new Set(boxes.map((b) => b.image).filter((i): i is string => !!i))];
  await ex.extract(images.map((i) => archivePath(i, ex.topLevelFolder)));
  const sizes = await inspectImages(root, images, opts);
  reportImages(sizes, report);
  // The table holds the boxes as cleaned (clipped, corners ordered, zero-area ones left out). An image whose every
  // box was left out is left out too: as a "no objects" image it would teach that its objects are background.
  const cleaned = checkBoxes(boxes, sizes, report);
  const hasBoxes = new Set(cleaned.filter((b) => b.coords).map((b) => b.image));
  // One row per box; an image with boxes drops its "no objects" row.
  const rows = cleaned
    .filter((b) => b.image && (b.coords || !hasBoxes.has(b.image)))
    .map((b) => [b.patient, b.image!, b.coords ? b.label : "", ...(b.coords ? b.coords.map(String) : ["", "", "", ""])]);
  return {
    root,
    idCol,
    imagesCol,
    labelCols: [labelCol],
    dataCols: [],
    classNameCol: null,
    problem: "detection",
    header: [idCol, imagesCol, labelCol, ...BOX_COLUMNS],
    rows,
    strataRows: rows.map((r) => ({ patient: r[0], label: "" })),
    splitRows: null,
  };
}
