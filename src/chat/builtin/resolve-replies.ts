import { quote } from "../safety.js";
import type { Task } from "../facts.js";
import { plainWords, type Candidate } from "../resolve.js";
import { reply, type Lang } from "../language.js";

// What the builtin says when a model named in words fits several of the caller's experiments, none of them, or one
// of another kind than the question needs. Names and descriptions are user text: always inside quote().

const KIND = { data: "tabular", vision: "image", detection: "object-detection" } as const;
const KIND_ES = { data: "tabular", vision: "de imagen", detection: "de detección de objetos" } as const;
const SHORT_KIND_ES = { data: "tabla", vision: "imagen", detection: "detección" } as const;
const article = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

/** "experiment 3 `Breast cancer (WDBC)` (tabular, ready)". */
export const candidateLine = (c: Candidate, lang: Lang = "en") =>
  `${reply(lang, "resolveReplies.experiment")} ${c.experiment_id}${c.name ? ` ${quote(c.name, 60)}` : ""} (${(lang === "es" ? SHORT_KIND_ES : KIND)[c.task]}, ${c.status})`;

export function askWhich(candidates: Candidate[], lang: Lang = "en"): string {
  const lines = [reply(lang, "resolveReplies.moreThanOneOfYour")];
  for (const c of candidates.slice(0, 10)) lines.push(`- ${candidateLine(c, lang)}`);
  lines.push(reply(lang, "resolveReplies.askAgainWithItsNumber"));
  return lines.join("\n");
}

export function noneFits(words: string[], all: Candidate[], lang: Lang = "en"): string {
  const lines = [reply(lang, "resolveReplies.noneOfYourExperimentsMatches", { join: quote(words.join(" "), 60) })];
  if (!all.length) lines.push(reply(lang, "resolveReplies.youHaveNoExperimentsYet"));
  else {
    lines.push(reply(lang, "resolveReplies.yourExperiments"));
    for (const c of all.slice(0, 15)) lines.push(`- ${candidateLine(c, lang)}`);
    if (all.length > 15) lines.push(reply(lang, "resolveReplies.andMoreAskListMy", { more: all.length - 15 }));
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
export function heatMapMismatch(c: Candidate, lang: Lang = "en"): string | undefined {
  if (c.task === "vision") return undefined;
  if (lang === "es") {
    const what =
      c.task === "detection"
        ? "devuelve cajas con puntuaciones, no un mapa de calor"
        : "recibe valores de una tabla, no una imagen, así que no tiene mapa de calor";
    return `El ${candidateLine(c, lang)} es un modelo ${KIND_ES[c.task]}: ${what}. Los mapas de calor (Grad-CAM, en \`gradients\` con \`columnas\` × \`filas\`) solo los dan los modelos de clasificación de imágenes.`;
  }
  const what =
    c.task === "detection" ? "it returns boxes with scores, not a heat map" : "it takes table values, not an image, so it has no heat map";
  return `${candidateLine(c)} is ${article(KIND[c.task])} model: ${what}. Heat maps (Grad-CAM, in \`gradients\` with \`columnas\` × \`filas\`) come only from image classification models.`;
}

export const heatMapLead = (c: Candidate, lang: Lang = "en") =>
  reply(lang, "resolveReplies.heatMapLead", { model: candidateLine(c, lang), id: c.experiment_id });

/** Why the model cannot take what the question means to send it ("an image to my diabetes model"), or undefined. */
export function inputKindMismatch(c: Candidate, implied: Task, lang: Lang = "en"): string | undefined {
  // A detection model takes images too: "send an image to the cell detector" is no mismatch.
  if (c.task === implied || (implied === "vision" && c.task === "detection")) return undefined;
  if (lang === "es") {
    const takes = {
      data: "valores de una tabla (sus `data_cols`)",
      vision: "una imagen",
      detection: "una imagen y devuelve cajas",
    } as const;
    return `El ${candidateLine(c, lang)} es un modelo ${KIND_ES[c.task]}, no ${KIND_ES[implied]}: recibe ${takes[c.task]}. Pida "lista mis experimentos de imagen" para encontrar el que busca.`;
  }
  const takes = { data: "table values (its `data_cols`)", vision: "an image", detection: "an image and returns boxes" } as const;
  return `${candidateLine(c)} is ${article(KIND[c.task])} model, not ${article(KIND[implied])} one: it takes ${takes[c.task]}. Ask "list my ${KIND[implied]} experiments" to find the one you mean.`;
}
