import { quote } from "../safety.js";
import type { Task } from "../facts.js";
import { plainWords, type Candidate } from "../resolve.js";

// What the builtin says when a model named in words fits several of the caller's experiments, none of them, or one
// of another kind than the question needs. Names and descriptions are user text: always inside quote().

const KIND = { data: "tabular", vision: "image", detection: "object-detection" } as const;
const article = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

/** "experiment 3 `Breast cancer (WDBC)` (tabular, ready)". */
export const candidateLine = (c: Candidate) =>
  `experiment ${c.experiment_id}${c.name ? ` ${quote(c.name, 60)}` : ""} (${KIND[c.task]}, ${c.status})`;

export function askWhich(candidates: Candidate[]): string {
  const lines = ["More than one of your experiments fits that description, so I will not guess. Which one do you mean?"];
  for (const c of candidates.slice(0, 10)) lines.push(`- ${candidateLine(c)}`);
  lines.push('Ask again with its number, e.g. "experiment N".');
  return lines.join("\n");
}

export function noneFits(words: string[], all: Candidate[]): string {
  const lines = [
    `None of your experiments matches ${quote(words.join(" "), 60)} by name, description, dataset, labels or kind, so I will not answer about a different one.`,
  ];
  if (!all.length) lines.push("You have no experiments yet.");
  else {
    lines.push("Your experiments:");
    for (const c of all.slice(0, 15)) lines.push(`- ${candidateLine(c)}`);
    if (all.length > 15) lines.push(`…and ${all.length - 15} more (ask "list my experiments").`);
  }
  return lines.join("\n");
}

/** A question about a heat map (Grad-CAM, saliency, "mapa de calor"): only image classification models have one. */
export function asksForHeatMap(message: string): boolean {
  const words = plainWords(message);
  const has = (w: string) => words.includes(w);
  return (
    has("heatmap") ||
    has("gradcam") ||
    has("saliency") ||
    (has("heat") && has("map")) ||
    (has("grad") && has("cam")) ||
    (has("mapa") && has("calor"))
  );
}

/** Why the model resolved cannot answer a heat-map question, or undefined when it can (an image model). */
export function heatMapMismatch(c: Candidate): string | undefined {
  if (c.task === "vision") return undefined;
  const what =
    c.task === "detection" ? "it returns boxes with scores, not a heat map" : "it takes table values, not an image, so it has no heat map";
  return `${candidateLine(c)} is ${article(KIND[c.task])} model: ${what}. Heat maps (Grad-CAM, in \`gradients\` with \`columnas\` × \`filas\`) come only from image classification models.`;
}

export const heatMapLead = (c: Candidate) =>
  `${candidateLine(c)} is an image model: each /predict answer carries its Grad-CAM heat map in \`gradients\` (\`columnas\` × \`filas\`), showing which pixels drove the score.`;

/** Why the model cannot take what the question means to send it ("an image to my diabetes model"), or undefined. */
export function inputKindMismatch(c: Candidate, implied: Task): string | undefined {
  // A detection model takes images too: "send an image to the cell detector" is no mismatch.
  if (c.task === implied || (implied === "vision" && c.task === "detection")) return undefined;
  const takes = { data: "table values (its `data_cols`)", vision: "an image", detection: "an image and returns boxes" } as const;
  return `${candidateLine(c)} is ${article(KIND[c.task])} model, not ${article(KIND[implied])} one: it takes ${takes[c.task]}. Ask "list my ${KIND[implied]} experiments" to find the one you mean.`;
}
