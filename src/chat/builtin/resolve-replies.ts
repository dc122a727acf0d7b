import { quote } from "../safety.js";
import type { Task } from "../facts.js";
import { plainWords, type Candidate } from "../resolve.js";
import { reply, wordFor, type Lang } from "../language.js";

// What the builtin says when a model named in words fits several of the caller's experiments, none of them, or one
// of another kind than the question needs. Names and descriptions are user text: always inside quote().

/** "experiment 3 `Breast cancer (WDBC)` (tabular, ready)". */
export const candidateLine = (c: Candidate, lang: Lang = "en") =>
  `${reply(lang, "resolveReplies.experiment")} ${c.experiment_id}${c.name ? ` ${quote(c.name, 60)}` : ""} (${wordFor(lang, "words.task", c.task)}, ${c.status})`;

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
  return reply(lang, `resolveReplies.heatMapMismatch.${c.task}`, { model: candidateLine(c, lang) });
}

export const heatMapLead = (c: Candidate, lang: Lang = "en") =>
  reply(lang, "resolveReplies.heatMapLead", { model: candidateLine(c, lang), id: c.experiment_id });

/** Why the model cannot take what the question means to send it ("an image to my diabetes model"), or undefined. */
export function inputKindMismatch(c: Candidate, implied: Task, lang: Lang = "en"): string | undefined {
  // A detection model takes images too: "send an image to the cell detector" is no mismatch.
  if (c.task === implied || (implied === "vision" && c.task === "detection")) return undefined;
  return reply(lang, "resolveReplies.inputKindMismatch", {
    model: candidateLine(c, lang),
    kind: reply(lang, `words.aKind.${c.task}`),
    implied: reply(lang, `words.aKind.${implied}`),
    takes: reply(lang, `words.takes.${c.task}`),
    listKind: reply(lang, `words.listKind.${implied}`),
  });
}
