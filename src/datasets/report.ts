// The dataset report: every problem found, where it is, and a summary of what the dataset holds.
// Problems are collected, never thrown, so one upload tells the user everything wrong with it at once.

import { say, type Message } from "../errors.js";
import type { CatalogValue } from "../i18n/error-keys.js";

/**
 * A dataset check's words: a key of locales/<lng>/problems.json under `dataset.` and the values it names. The report
 * keeps the key and values beside the English (each reader's language is chosen when the report is read: the
 * dashboard and src/experiments/view-language.ts), so no check writes a sentence of its own
 * (test/unit/dataset-problem-keys.test.ts reads every call against both catalogs).
 */
export function problem(key: `dataset.${string}`, values: Record<string, string | number> = {}): Message {
  return { key: `problems:${key}`, values } as unknown as Message;
}

/** A problem's stored values: a value that is itself catalog words is said in English (none of the checks nest one). */
function storedParams(values: Readonly<Record<string, CatalogValue>>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, v] of Object.entries(values)) out[name] = typeof v === "object" ? say(v as Message, "en") : v;
  return out;
}

type Where = Omit<DatasetProblem, "severity" | "code" | "message" | "key" | "params">;

/** One problem worded from the catalog: its English as the message, its key and values for any other reader. */
export function datasetProblem(severity: Severity, code: string, text: Message, where: Where = {}): DatasetProblem {
  return { severity, code, message: say(text, "en"), ...where, key: text.key, params: storedParams(text.values) };
}

/** ';' is Excel's separator where the decimal mark is ','; tab is R's write.table / spreadsheets' "text" export. */
export type Delimiter = "," | ";" | "\t";

export type Severity = "error" | "warning";

export interface DatasetProblem {
  severity: Severity;
  code: string;
  message: string;
  /** Line number as a spreadsheet shows it: the header is row 1, the first data row is row 2. */
  row?: number;
  column?: string;
  /** Path inside the zip (or the image path as written in the CSV). */
  path?: string;
  /**
   * The catalog key of the message (namespace:key, e.g. problems:pipeline.image_unreadable) and its values: a report
   * read in another language says it from these (src/experiments/view.ts). Absent in reports stored before keys, whose
   * message stays the English it was.
   */
  key?: string;
  params?: Record<string, string | number>;
}

/** What the DICOM files of a dataset are (dicom-summary.ts fills it): counts only, never a header's value. */
export interface DicomDatasetSummary {
  files: number;
  modalities: Record<string, number>;
  manufacturers: Record<string, number>;
  transfer_syntaxes: Record<string, number>;
  bits_stored: Record<string, number>;
  photometric: Record<string, number>;
  /** Row spacing in mm over the files that state one; null when none does. */
  pixel_spacing_mm: { min: number; max: number; files: number } | null;
  frames: { min: number; max: number; multi_frame_files: number };
  /** Per identifying tag, how many files fill it. */
  identifying_headers: Record<string, number>;
  burned_in_annotation: number;
}

export interface DatasetSummary {
  format?: "csv" | "voc" | "coco";
  csv_path?: string;
  delimiter?: Delimiter;
  /** Folder around everything in the zip that was removed ("tolerated top-level folder"). */
  top_level_folder?: string | null;
  rows?: number;
  patients?: number;
  images?: number;
  images_per_patient?: { min: number; max: number; mean: number };
  /** Per label column: class value -> row count (boxes for detection). */
  class_counts?: Record<string, Record<string, number>>;
  image_sizes?: { width: { min: number; max: number }; height: { min: number; max: number }; channels: Record<string, number> };
  features?: Array<{ name: string; type: "numeric" | "categorical"; min?: number; max?: number; categories?: number; missing: number }>;
  label_range?: { min: number; max: number };
  /** Boxes kept for training; dropped (zero-area), clipped (overhanging by a few pixels) and swapped corners, each warned. */
  boxes?: number;
  boxes_dropped?: number;
  boxes_clipped?: number;
  boxes_swapped?: number;
  /** Patients per part of the split (prepare only); from_column names the user's split column when it made the split. */
  split?: { train: number; val: number; test: number; from_column?: string };
  /** Files in the zip that no CSV row refers to (vision). */
  unreferenced_images?: number;
  images_without_objects?: number;
  /** validate only (vision classification): label column -> class -> a few thumbnails, as data: URIs. */
  samples?: Record<string, Record<string, Array<{ path: string; row: number; data: string }>>>;
  /** The DICOM files among the images: counts and ranges of their technical attributes (never a header's value). */
  dicom?: DicomDatasetSummary;
  /** How many problems of each code were found, including those left out of the lists. */
  problem_counts?: Record<string, number>;
}

export interface DatasetReport {
  valid: boolean;
  errors: DatasetProblem[];
  warnings: DatasetProblem[];
  /** Problems found but left out of the lists (each list is capped). */
  errors_omitted: number;
  warnings_omitted: number;
  summary: DatasetSummary;
}

/** Per code, only the first few problems are listed (the rest are counted) so one frequent fault cannot hide others. */
export const MAX_PER_CODE = 25;
export const MAX_PER_LIST = 200;

export class ReportBuilder {
  readonly errors: DatasetProblem[] = [];
  readonly warnings: DatasetProblem[] = [];
  readonly counts: Record<string, number> = {};
  errorsOmitted = 0;
  warningsOmitted = 0;
  private errorTotal = 0;
  summary: DatasetSummary = {};

  /** An error, worded from the catalog (problem(), or a fault's msg()): the English is kept as the message. */
  error(code: string, text: Message, where: Where = {}): void {
    this.add(datasetProblem("error", code, text, where));
  }

  warn(code: string, text: Message, where: Where = {}): void {
    this.add(datasetProblem("warning", code, text, where));
  }

  /** A fault that stopped the checks, as an error of the report, with its catalog words. */
  fault(err: DatasetFault): void {
    this.error(err.code, err.text, err.where);
  }

  private add(p: DatasetProblem): void {
    const n = (this.counts[p.code] = (this.counts[p.code] ?? 0) + 1);
    const list = p.severity === "error" ? this.errors : this.warnings;
    if (p.severity === "error") this.errorTotal++;
    if (n > MAX_PER_CODE || list.length >= MAX_PER_LIST) {
      if (p.severity === "error") this.errorsOmitted++;
      else this.warningsOmitted++;
      return;
    }
    list.push(p);
  }

  get hasErrors(): boolean {
    return this.errorTotal > 0;
  }

  build(): DatasetReport {
    return {
      valid: !this.hasErrors,
      errors: this.errors,
      warnings: this.warnings,
      errors_omitted: this.errorsOmitted,
      warnings_omitted: this.warningsOmitted,
      summary: { ...this.summary, problem_counts: { ...this.counts } },
    };
  }
}

/** A fatal problem that stops the checks early (unreadable zip, unsafe entry, no CSV): reported, not thrown to the caller. */
export class DatasetFault extends Error {
  /** The catalog words (a refused upload says them in the caller's language; a report keeps their key and values). */
  public readonly text: Message;

  constructor(
    public readonly code: string,
    words: Message,
    public readonly where: Where = {},
  ) {
    super(say(words, "en"));
    this.text = words;
  }
}
