import fs from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { Config } from "../config.js";
import type { Bucket } from "../storage/bucket.js";
import { meter } from "../storage/local-bucket.js";
import { analyseDataset, type Analysed } from "./analyse.js";
import { OpenedZip, type DatasetArchive, type ExtractLimits } from "./extract.js";
import { msg } from "../errors.js";
import { DatasetFault, problem, ReportBuilder, type DatasetReport } from "./report.js";
import { allTest, patientStrata, splitFromColumn, splitPatients, warnSmallTestPart } from "./split.js";
import { writeCsv } from "./table-writer.js";
import type { DatasetTask, PreparedDataset } from "./types.js";

export type { DatasetTask, PreparedDataset, DatasetReport };

export interface PrepareArgs {
  /** Bucket object path (zip_gcloud), already authorised by the caller. */
  zipPath: string;
  /** Per-experiment folder the caller owns (created if missing); everything is written under it. */
  workDir: string;
  task: DatasetTask;
  seed: number;
  /** all_test for Retrospective: every patient in test. */
  split: "train_val_test" | "all_test";
  signal?: AbortSignal;
  /** Thumbnails of a few images per class in the report (validate shows them; experiments do not store them). */
  samples?: boolean;
}

export const limitsOf = (config: Config): ExtractLimits => ({
  maxEntries: config.ZIP_MAX_ENTRIES,
  maxUncompressedBytes: config.ZIP_MAX_UNCOMPRESSED_BYTES,
  maxCompressionRatio: config.ZIP_MAX_COMPRESSION_RATIO,
});

/**
 * Fetches the zip, extracts it safely, checks it and, when valid, writes the normalised table and the
 * patient split. Problems with the user's data come back in the report (never thrown); infrastructure
 * failures (bucket unreachable, disk full) and cancellation (AbortError) are thrown.
 */
export async function prepareDataset(deps: { bucket: Bucket; config: Config }, args: PrepareArgs): Promise<PreparedDataset> {
  const report = new ReportBuilder();
  const workDir = path.resolve(args.workDir);
  await fs.promises.mkdir(workDir, { recursive: true });
  const zipLocal = path.join(workDir, "dataset.zip");
  const stat = await deps.bucket.stat(args.zipPath);
  if (!stat) {
    report.error("zip_not_found", msg("dataset.no_file_upload_first", { path: args.zipPath }), { path: args.zipPath });
    return { report: report.build(), sha256: "" };
  }
  const m = meter();
  await pipeline(await deps.bucket.read(args.zipPath), m.stream, fs.createWriteStream(zipLocal), { signal: args.signal });
  const { sha256 } = m.result();
  // The checks are bounded in time (VALIDATION_TIMEOUT_S): past it the report says so, instead of the check running on.
  const timeout = AbortSignal.timeout(deps.config.VALIDATION_TIMEOUT_S * 1000);
  const signal = args.signal ? AbortSignal.any([args.signal, timeout]) : timeout;

  const extractDir = path.join(workDir, "dataset");
  await fs.promises.rm(extractDir, { recursive: true, force: true });
  let analysed: Analysed | null = null;
  let opened: OpenedZip | undefined;
  try {
    // A data task reads only the CSV: the other entries are checked from the central directory, never written.
    const keep = args.task.inputs === "table" ? (name: string) => name.toLowerCase().endsWith(".csv") : undefined;
    opened = await OpenedZip.open(zipLocal, limitsOf(deps.config), { keep, signal });
    const zip = opened;
    const ex: DatasetArchive = {
      dir: path.resolve(extractDir),
      files: zip.files,
      topLevelFolder: zip.topLevelFolder,
      totalBytes: zip.totalBytes,
      skipped: zip.skipped,
      extract: (names) => zip.extract(extractDir, names, signal),
    };
    // The annotations first (the CSV; for detection also VOC XML and COCO JSON); images once the CSV names them.
    await ex.extract(zip.files.filter((f) => (args.task.family === "detection" ? /\.(csv|xml|json)$/i : /\.csv$/i).test(f)));
    report.summary.top_level_folder = ex.topLevelFolder;
    analysed = await analyseDataset(ex, args.task, report, {
      willSplit: args.split === "train_val_test",
      // A DICOM larger than /predict would take could not be scored by the model it trains; it is refused unread.
      maxDicomPixels: deps.config.FETCH_MAX_PIXELS,
      signal,
      samples: args.samples,
    });
  } catch (err) {
    if (timeout.aborted && !args.signal?.aborted) {
      report.error("validation_timeout", problem("dataset.validation_timeout", { seconds: deps.config.VALIDATION_TIMEOUT_S }));
    } else if (err instanceof DatasetFault) report.fault(err);
    else throw err;
    // A refused archive leaves nothing extracted behind.
    await fs.promises.rm(extractDir, { recursive: true, force: true });
  } finally {
    opened?.close();
    await fs.promises.rm(zipLocal, { force: true });
  }
  // The user's split column is checked with the rest, so its problems land in the same report.
  const fromColumn =
    analysed?.splitRows && args.split === "train_val_test"
      ? splitFromColumn(analysed.splitRows, args.seed, {
          column: args.task.split_col!,
          labelCols: args.task.family === "classification" ? analysed.labelCols : [],
          report,
        })
      : null;
  if (!analysed || report.hasErrors) return { report: report.build(), sha256 };

  const table = path.join(workDir, "table.csv");
  await writeCsv(table, analysed.header, analysed.rows);
  const regression = analysed.problem === "regression";
  const strata = patientStrata(analysed.strataRows, { regression });
  const split =
    args.split === "all_test"
      ? allTest(
          analysed.strataRows.map((r) => r.patient),
          args.seed,
        )
      : (fromColumn ?? splitPatients(strata, args.seed));
  report.summary.split = {
    train: split.train.length,
    val: split.val.length,
    test: split.test.length,
    ...(fromColumn ? { from_column: args.task.split_col! } : {}),
  };
  // Counting test patients per class needs one class per patient: binary and multiclass (regression strata are bins).
  if (regression) warnSmallTestPart(split, null, report);
  else if (analysed.problem === "binary" || analysed.problem === "multiclass") warnSmallTestPart(split, strata, report);
  return {
    report: report.build(),
    sha256,
    root: analysed.root,
    table,
    idCol: analysed.idCol,
    imagesCol: analysed.imagesCol,
    labelCols: analysed.labelCols,
    dataCols: analysed.dataCols,
    classNameCol: analysed.classNameCol,
    problem: analysed.problem,
    split,
  };
}
