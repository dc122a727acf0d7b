import type { ServedManifest } from "../serving/manifest.js";
import { classNames } from "../serving/manifest.js";
import { spreadsheetCell } from "../datasets/table-writer.js";

// results.csv of a batch: one line per input, in the input's order. Classification: the predicted class(es) by
// name and each class's score, as /predict's prediccion and score; regression: the value; detection: the boxes as
// JSON. out_of_range names the columns whose value lies outside the training data; error says why a line has no
// score (the rest of the batch goes on).

/** Numbers as they are (a negative score stays a number); every text through spreadsheetCell (ids, class and column
 * names, messages: any of them may come from the user's own CSV). */
const line = (cells: Array<string | number>) => cells.map((c) => (typeof c === "number" ? String(c) : spreadsheetCell(c))).join(",") + "\n";

export function resultHeader(m: ServedManifest, images: boolean): string {
  const names = Object.values(classNames(m));
  const id = images ? "image" : "id";
  if (m.kind === "detection") return line([id, "boxes", "error"]);
  if (m.problem === "regression") return line([id, "prediction", "out_of_range", "error"]);
  return line([id, "prediction", ...names.map((n) => `score_${n}`), ...(images ? [] : ["out_of_range"]), "error"]);
}

export function resultLine(
  m: ServedManifest,
  id: string,
  answer: Record<string, unknown> | undefined,
  outOfRange: string[],
  error: string | undefined,
): string {
  const names = classNames(m);
  const classCount = Object.keys(names).length;
  const images = m.kind !== "tabular";
  const cells: Array<string | number> = [id];
  if (m.kind === "detection") {
    const boxes = (answer?.boxes as number[][] | undefined) ?? [];
    const score = (answer?.score as number[] | undefined) ?? [];
    const cls = (answer?.classification as number[] | undefined) ?? [];
    cells.push(answer ? JSON.stringify(boxes.map((b, i) => ({ class: names[String(cls[i])] ?? cls[i], score: score[i], box: b }))) : "");
  } else if (m.problem === "regression") {
    cells.push(answer ? (answer.prediccion as number[])[0] : "", outOfRange.join(";"));
  } else {
    const predicted = (answer?.prediccion as number[] | undefined) ?? [];
    const score = (answer?.score as number[] | undefined) ?? [];
    cells.push(answer ? predicted.flatMap((p, i) => (p ? [names[String(i)]] : [])).join(";") : "");
    for (let i = 0; i < classCount; i++) cells.push(answer ? score[i] : "");
    if (!images) cells.push(outOfRange.join(";"));
  }
  cells.push(error ?? "");
  return line(cells);
}
