import { METRIC_NAMES } from "../../contract/types.js";
import { findMetric, type Glossary } from "../glossary.js";
import type { Task } from "../facts.js";
import { readSlotVocabulary } from "../matcher/table.js";
import { spelledLike } from "../spelling.js";

// Slots (issue 53): the small facts a question carries beside its intent (experiment numbers, a metric, a kind of
// model, a status, a threshold, per class), each found by one small extractor. The values they know are data
// (src/chat/intents/slots.json); every pattern here is linear in the message (test/unit/regex-redos.test.ts).

const VOCAB = readSlotVocabulary();

/** A word without the dots around it ("auc." → "auc"; "0.5" keeps its own): a loop, linear on a word of dots. */
function trimDots(w: string): string {
  let a = 0;
  let b = w.length;
  while (a < b && w[a] === ".") a++;
  while (b > a && w[b - 1] === ".") b--;
  return w.slice(a, b);
}

/** The words of a message as the slot phrases are written: lower case, no accents, single spaces, padded. */
export function slotText(message: string): string {
  const words = message
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9_@.²]+/)
    .map(trimDots)
    .filter(Boolean);
  return ` ${words.join(" ")} `;
}
const hasPhrase = (padded: string, phrase: string) => padded.includes(` ${phrase} `);

/**
 * Experiment numbers named in the text: "experiment 42", "exp 7", "#3", "modelo 12", "experimentos 1 y 2", and
 * misspelt ("experimneto 4", "experment 4"): "exp", or a word that starts with "expr"/"exper", before a number.
 */
export function experimentNumbers(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(
    /\b(?:exp(?:e?r[a-z]{0,10})?\.?|models?|modelos?|runs?|study|#)\s*(?:(?:no\.?|number|n[º°o]\.?)\s*)?#?(\d{1,10})((?:\s*(?:,|and|&|vs\.?|versus|or|y|o)\s*#?\d{1,10})*)/gi,
  )) {
    out.push(Number(m[1]));
    for (const n of (m[2] ?? "").matchAll(/\d{1,10}/g)) out.push(Number(n[0]));
  }
  for (const m of text.matchAll(/(?:^|\s)#(\d{1,10})\b/g)) out.push(Number(m[1]));
  return [...new Set(out.filter((n) => n > 0 && n <= 2_147_483_647))];
}

/** A metric named in the text, as its contract name: the documentation's names first, then slots.json's. */
export function metricIn(text: string, glossary: Glossary): string | undefined {
  if (/\bmap\s*(?:@\s*)?(0?\.5|50)\s*[:_-]\s*(0?\.95|95)\b/i.test(text)) return "map50_95";
  if (/\bmap\s*@\s*0?\.5\b/i.test(text)) return "map50";
  return metricsNamedIn(text, glossary)[0] ?? (/\bmap\b/i.test(text) ? "map50" : undefined);
}

/** Every metric named ("precision and recall", "sensibilidad y especificidad"), in order, each once. */
export function metricsNamedIn(text: string, glossary: Glossary): string[] {
  const padded = slotText(text);
  const found: Array<[number, string]> = [];
  for (const w of padded.trim().split(" ")) {
    const m = findMetric(glossary, w) ?? (METRIC_NAMES as readonly string[]).find((n) => n === w);
    if (m) found.push([padded.indexOf(` ${w} `), typeof m === "string" ? m : m.name]);
  }
  const words = padded.trim().split(" ");
  for (const [phrase, name] of Object.entries(VOCAB.metrics)) {
    let at = padded.indexOf(` ${phrase} `);
    if (at < 0 && !phrase.includes(" ")) {
      const like = words.find((w) => spelledLike(w, phrase));
      if (like) at = padded.indexOf(` ${like} `);
    }
    if (at >= 0) found.push([at, name]);
  }
  return [...new Set(found.sort((a, b) => a[0] - b[0]).map(([, n]) => n))];
}

// A snake_case word. Written as /[a-z][a-z0-9]*(?:_[a-z0-9]+)+/ it rescanned a long word from each of its letters
// (quadratic); every letter of a run of [a-z0-9] gives the same answer, so only the run's start is tried: the
// same matches, each in group 1 (test/unit/chat-intents.test.ts compares the two).
const SNAKE_CASE = /(?<![a-z0-9])[0-9]*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)/gi;
export const snakeCaseWords = (text: string) => [...text.matchAll(SNAKE_CASE)].map((m) => m[1]);

/** A documented error or problem code named in the text (snake_case words only). */
export function codeIn(text: string, glossary: Glossary): string | undefined {
  for (const word of snakeCaseWords(text)) {
    const code = word.toLowerCase();
    if (glossary.codes.has(code)) return code;
  }
  return undefined;
}

/** The kind of model the words name: images, a table, boxes. */
export function taskIn(text: string): Task | undefined {
  const padded = slotText(text);
  for (const task of ["detection", "vision", "data"] as const) if (VOCAB.tasks[task].some((p) => hasPhrase(padded, p))) return task;
  return undefined;
}

/** The status a list asks for ("my failed experiments", "¿qué experimentos tengo listos?"). */
export function statusIn(text: string): string | undefined {
  const padded = slotText(text);
  return Object.entries(VOCAB.statuses).find(([, phrases]) => phrases.some((p) => hasPhrase(padded, p)))?.[0];
}

const anyWordLike = (padded: string, values: string[]) => {
  const words = padded.trim().split(" ");
  return values.some((v) => (v.includes(" ") ? hasPhrase(padded, v) : words.some((w) => spelledLike(w, v))));
};

export const asksForThresholds = (text: string) => anyWordLike(slotText(text), VOCAB.thresholds);
export const asksPerClass = (text: string) => VOCAB.per_class.some((p) => hasPhrase(slotText(text), p));
