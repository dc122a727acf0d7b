import type { ServedManifest } from "../serving/manifest.js";
import { classNames } from "../serving/manifest.js";

// results.csv of a batch: one line per input, in the input's order. Classification: the predicted class(es) by
// name and each class's score, as /predict's prediccion and score; regression: the value; detection: the boxes as
// JSON. out_of_range names the columns whose value lies outside the training data; error says why a line has no
// score (the rest of the batch goes on).

function cell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A formula-looking id ("=HYPERLINK(...)") would run when the CSV is opened in a spreadsheet: quote it as text. */
function safeText(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

export function resultHeader(m: ServedManifest, images: boolean): string {
  const names = Object.values(classNames(m));
  const id = images ? "image" : "id";
  if (m.kind === "detection") return [id, "boxes", "error"].join(",") + "\n";
  if (m.problem === "regression") return [id, "prediction", "out_of_range", "error"].map(cell).join(",") + "\n";
  return (
    [id, "prediction", ...names.map((n) => `score_${n}`), ...(images ? [] : ["out_of_range"]), "error"]
      .map((h) => cell(safeText(h)))
      .join(",") + "\n"
  );
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
  const cells: string[] = [safeText(id)];
  if (m.kind === "detection") {
    const boxes = (answer?.boxes as number[][] | undefined) ?? [];
    const score = (answer?.score as number[] | undefined) ?? [];
    const cls = (answer?.classification as number[] | undefined) ?? [];
    cells.push(answer ? JSON.stringify(boxes.map((b, i) => ({ class: names[String(cls[i])] ?? cls[i], score: score[i], box: b }))) : "");
  } else if (m.problem === "regression") {
    cells.push(answer ? String((answer.prediccion as number[])[0]) : "", outOfRange.join(";"));
  } else {
    const predicted = (answer?.prediccion as number[] | undefined) ?? [];
    const score = (answer?.score as number[] | undefined) ?? [];
    cells.push(
      answer
        ? predicted
            .map((p, i) => (p ? names[String(i)] : null))
            .filter((n): n is string => n !== null)
            .map(safeText)
            .join(";")
        : "",
    );
    for (let i = 0; i < classCount; i++) cells.push(answer ? String(score[i]) : "");
    if (!images) cells.push(outOfRange.join(";"));
  }
  cells.push(error ?? "");
  return cells.map(cell).join(",") + "\n";
}
