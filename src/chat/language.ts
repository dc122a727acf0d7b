import { MAX_CHARS } from "./matcher/features.js";
import { intentMatcher } from "./matcher/index.js";
import { translator, type Params, type Translator } from "../i18n/strict.js";
import { LANGUAGES } from "../i18n/index.js";

// Which language a message is in, decided per message (issue 39): Builder's first users write Spanish as often as
// English, sometimes both in one conversation. Since issue 53 a two-class model learnt from the chat's own example
// questions (src/chat/intents/{en,es}.json, matcher/train.ts) tells them apart by their character n-grams, ¿ and ¡
// included; code spans and snake_case identifiers (column names, codes) say nothing about the writer's language and
// are left out.

export type Lang = "en" | "es";

/** How sure the language model must be; between these the message does not tell, and the fallback decides. */
const SURE = 0.7;

/**
 * The language a message's words tell, or undefined when they do not tell (the model is not sure either way). Kept
 * by the text read: a conversation's earlier questions are read again on every request (bench/chat/worst-case.ts).
 */
function toldLanguage(message: string): Lang | undefined {
  const read = message.slice(0, MAX_CHARS);
  if (TOLD.has(read)) return TOLD.get(read);
  const told = readLanguage(read);
  if (TOLD.size >= 1_000) TOLD.delete(TOLD.keys().next().value!);
  TOLD.set(read, told);
  return told;
}
const TOLD = new Map<string, Lang | undefined>();

function readLanguage(message: string): Lang | undefined {
  const text = message
    .slice(0, MAX_CHARS)
    .replace(/`[^`]*`/g, " ")
    .replace(/\b\w+_\w+\b/g, " ");
  const p = intentMatcher().spanish(text);
  return p >= SURE ? "es" : p <= 1 - SURE ? "en" : undefined;
}

/** The language of one message; `fallback` (the conversation's, else English) when its words do not tell. */
export function detectLanguage(message: string, fallback: Lang = "en"): Lang {
  return toldLanguage(message) ?? fallback;
}

/** The language of the conversation so far: its newest user message that tells (one reading per message). */
export function conversationLanguage(history: ReadonlyArray<{ role: string; content: string }>): Lang {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].role !== "user") continue;
    const told = toldLanguage(history[i].content);
    if (told) return told;
  }
  return "en";
}

/** One translator per language of the catalog (src/i18n LANGUAGES): a language is added by adding its files. */
export const translators = (page: string) =>
  Object.fromEntries(LANGUAGES.map((lng) => [lng, translator(lng, page)])) as Record<Lang, Translator>;

const replies = translators("chat-replies");

/**
 * A reply sentence from the catalog (locales/<lang>/chat-replies.json, "<file>.<key>") with its values; a missing
 * key or value throws rather than answer with a key or an unfilled "{{name}}". Values are text the reply already
 * made safe (numbers, codes, quote()d user data); they are put in once, never read as a message.
 */
export const reply = (lang: Lang, key: string, values?: Params) => replies[lang].t(key, values);

/** Whether the catalog has `key` in `lang`: for words looked up by a code that may be newer than the catalog. */
export const hasReply = (lang: Lang, key: string) => replies[lang].has(key);

/** The catalog's word for a code (a task, a severity, a drift status), or the code itself when it has none yet. */
export const wordFor = (lang: Lang, group: string, code: string) =>
  hasReply(lang, `${group}.${code}`) ? reply(lang, `${group}.${code}`) : code.replace(/_/g, " ");
