import fs from "node:fs";
import yauzl from "yauzl";
import { decodeName } from "../datasets/extract.js";
import { xlsxFirstSheetToCsv } from "../datasets/table-upload.js";
import { openZipFile } from "../datasets/zip-reader.js";
import { refusals } from "./refusals.js";

// An .xlsx sent for a batch, turned into the CSV the batch reads, within bounds set by the workbook's own size. An
// .xlsx is a zip of XML, and a small one can stand for a huge table: a text stored once in the shared strings and
// named by every row (a 172 KiB workbook made 300 MB of table and of results.csv), or rows of empty cells far to the
// right. So the workbook's parts may expand at most ZIP_MAX_COMPRESSION_RATIO times its size (what a dataset's zip
// may), its shared texts (held in memory while the sheet is read) at most SHARED_STRINGS_MAX_BYTES, and the table it
// makes at most that ratio times its size and BATCH_MAX_CELLS cells; the conversion stops at the first limit passed.

/** The shared strings part is read into memory whole by the XLSX reader: a batch's table never needs more. */
export const SHARED_STRINGS_MAX_BYTES = 64 * 1024 * 1024;
/** Below this, a workbook is never called a bomb: a few rows compress absurdly well and harm nobody. */
const RATIO_MIN_BYTES = 1024 * 1024;

export interface WorkbookLimits {
  maxCompressionRatio: number;
  maxCells: number;
}

/** The largest table (CSV bytes) a workbook of this size may make, and its parts may expand to. */
const expandedLimit = (fileBytes: number, ratio: number) => Math.max(RATIO_MIN_BYTES, ratio * fileBytes);

/**
 * The parts' sizes from the zip's central directory, before the XLSX reader opens it. A file that is not a zip is
 * left to the reader, which says that in words.
 */
async function checkParts(xlsxFile: string, fileBytes: number, limits: WorkbookLimits): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await openZipFile(xlsxFile, { lazyEntries: true, decodeStrings: false });
  } catch {
    return;
  }
  const limit = expandedLimit(fileBytes, limits.maxCompressionRatio);
  try {
    let total = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on("entry", (entry: yauzl.Entry) => {
        total += entry.uncompressedSize;
        if (total > limit) return reject(refusals.workbookExpands(limit, fileBytes, limits.maxCompressionRatio));
        if (/(^|\/)sharedStrings\.xml$/i.test(decodeName(entry)) && entry.uncompressedSize > SHARED_STRINGS_MAX_BYTES)
          return reject(refusals.workbookTexts(entry.uncompressedSize, SHARED_STRINGS_MAX_BYTES));
        zip.readEntry();
      });
      zip.once("end", resolve);
      zip.once("error", () => resolve()); // a damaged zip: the reader says so
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

/** The workbook's first sheet as `csvFile`, or a refusal naming the limit it passed. */
export async function workbookToCsv(xlsxFile: string, csvFile: string, limits: WorkbookLimits): Promise<void> {
  const fileBytes = (await fs.promises.stat(xlsxFile)).size;
  await checkParts(xlsxFile, fileBytes, limits);
  const maxCsvBytes = expandedLimit(fileBytes, limits.maxCompressionRatio);
  await xlsxFirstSheetToCsv(xlsxFile, csvFile, "the workbook", ({ csvBytes, cells, width }) => {
    if (cells > limits.maxCells) throw refusals.tooManyCells(limits.maxCells, width);
    if (csvBytes > maxCsvBytes) throw refusals.workbookExpands(maxCsvBytes, fileBytes, limits.maxCompressionRatio);
  });
}
