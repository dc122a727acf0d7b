import fs from "node:fs";
import type { ServedManifest } from "../serving/manifest.js";
import { classNames } from "../serving/manifest.js";
import { spreadsheetCell } from "../datasets/table-writer.js";
import { refusals, resultsLimit } from "./refusals.js";

// results.csv of a batch: the lines of each input together, in the input's order. Classification: one line per
// input, the predicted class(es) by name and each class's score, as /predict's prediccion and score; regression: the
// value; detection: one line per box (see resultLines). out_of_range names the columns whose value lies outside the
// training data; input_check (models built with the check) says whether the input looks like the training data at all
// (familiar / unfamiliar, as /predict's x-input-check header); error says why an input has no score (the rest of the batch goes on). A batch with Grad-CAM
// overlays also names each image's picture in overlays.zip and the class its map is of.

/** Numbers as they are (a negative score stays a number); every text through spreadsheetCell (ids, class and column
 * names, messages: any of them may come from the user's own CSV). */
const line = (cells: Array<string | number>) => cells.map((c) => (typeof c === "number" ? String(c) : spreadsheetCell(c))).join(",") + "\n";

export interface ResultOptions {
  images: boolean;
  /** The batch makes overlays.zip: the overlay and overlay_class columns. */
  overlays?: boolean;
}

/** An image's overlay in overlays.zip and the class whose map it shows ("" for none). */
export interface OverlayCells {
  file: string;
  className: string;
}

export const DETECTION_HEADER = ["image", "box", "class", "score", "x_min", "y_min", "x_max", "y_max", "error"];

export function resultHeader(m: ServedManifest, o: ResultOptions): string {
  const names = Object.values(classNames(m));
  const id = o.images ? "image" : "id";
  if (m.kind === "detection") return line(DETECTION_HEADER);
  const check = m.input_check ? ["input_check"] : [];
  if (m.problem === "regression") return line([id, "prediction", "out_of_range", ...check, "error"]);
  return line([
    id,
    "prediction",
    ...names.map((n) => `score_${n}`),
    ...(o.images ? [] : ["out_of_range"]),
    ...check,
    ...(o.overlays ? ["overlay", "overlay_class"] : []),
    "error",
  ]);
}

/**
 * The lines of one input. Detection: one line per box, numbered from 1 in /predict's order (highest score first),
 * with the class by name, the score and the corners in the image's own pixels (x to the right, y down, as /predict's
 * boxes), so a spreadsheet filters and sorts them like any table; an image with no box gets one line with box 0 and
 * empty cells, so every image of the zip is in the file; an image that failed gets one line with its error.
 */
export function resultLines(
  m: ServedManifest,
  id: string,
  answer: Record<string, unknown> | undefined,
  outOfRange: string[],
  error: string | undefined,
  overlay?: OverlayCells,
): string {
  const names = classNames(m);
  const classCount = Object.keys(names).length;
  const images = m.kind !== "tabular";
  if (m.kind === "detection") {
    const boxes = (answer?.boxes as number[][] | undefined) ?? [];
    if (!answer || boxes.length === 0) return line([id, answer ? 0 : "", "", "", "", "", "", "", error ?? ""]);
    const score = (answer.score as number[] | undefined) ?? [];
    const cls = (answer.classification as number[] | undefined) ?? [];
    return boxes.map((b, i) => line([id, i + 1, names[String(cls[i])] ?? String(cls[i]), score[i], b[0], b[1], b[2], b[3], ""])).join("");
  }
  const cells: Array<string | number> = [id];
  // Empty for an input with no answer; "unchecked" cannot occur here (the column exists only with the check).
  const check = m.input_check ? [typeof answer?.input_check === "string" ? answer.input_check : ""] : [];
  if (m.problem === "regression") {
    cells.push(answer ? (answer.prediccion as number[])[0] : "", outOfRange.join(";"), ...check);
  } else {
    const predicted = (answer?.prediccion as number[] | undefined) ?? [];
    const score = (answer?.score as number[] | undefined) ?? [];
    cells.push(answer ? predicted.flatMap((p, i) => (p ? [names[String(i)]] : [])).join(";") : "");
    for (let i = 0; i < classCount; i++) cells.push(answer ? score[i] : "");
    if (!images) cells.push(outOfRange.join(";"));
    cells.push(...check);
    if (overlay) cells.push(overlay.file, overlay.className);
  }
  cells.push(error ?? "");
  return line(cells);
}

/**
 * results.csv as it is written, held to the bound its input sets (refusals.ts: resultsLimit): a line per input can
 * be larger than the input's own (an id repeated from a workbook's shared strings, a detection model's boxes), so
 * the file stops at the bound with the limit named instead of filling the disk. `refuseEarly` refuses before the
 * first line when even lines with no score would pass it.
 */
export class ResultsFile {
  private readonly out: fs.WriteStream;
  private written = 0;
  private readonly maxBytes: number;

  constructor(
    file: string,
    private readonly inputBytes: number,
  ) {
    this.maxBytes = resultsLimit(inputBytes);
    this.out = fs.createWriteStream(file);
  }

  static refuseEarly(m: ServedManifest, o: ResultOptions, inputBytes: number, inputs: number): void {
    const shortest = resultLines(m, "", undefined, [], "", o.overlays ? { file: "", className: "" } : undefined).length;
    if (resultHeader(m, o).length + inputs * shortest > resultsLimit(inputBytes))
      throw refusals.resultsTooLarge(resultsLimit(inputBytes), inputBytes);
  }

  async write(text: string): Promise<void> {
    this.written += Buffer.byteLength(text);
    if (this.written > this.maxBytes) throw refusals.resultsTooLarge(this.maxBytes, this.inputBytes);
    if (!this.out.write(text)) await new Promise<void>((r) => this.out.once("drain", () => r()));
  }

  end(): Promise<void> {
    return new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  destroy(): void {
    this.out.destroy();
  }
}
