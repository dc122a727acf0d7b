// API error messages in the caller's language (Accept-Language), said once at the edge from the one catalog
// (locales/<lng>/errors.json): an ApiError carries a key and its values (msg() in src/errors.ts), never a sentence
// to translate back. Codes, field names, status and the shape of the body never change with the language.
import type { z } from "zod";
import { detailText, say, type ApiError, type ErrorDetail } from "../errors.js";
import { hasKey, LANGUAGES, translate, type Language } from "../i18n/index.js";

export const API_LANGUAGES = LANGUAGES;
export type ApiLanguage = Language;

/** The first language of Accept-Language (by q, then order) that the API speaks; English otherwise. */
export function preferredLanguage(header: string | string[] | undefined): ApiLanguage {
  const value = Array.isArray(header) ? header.join(",") : (header ?? "");
  const ranked = value
    .split(",")
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((x) => x !== undefined);
      return { lang: tag.trim().toLowerCase().split("-")[0], q: q === undefined ? 1 : Number(q), i };
    })
    .filter((x) => x.lang && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { lang } of ranked) {
    if ((API_LANGUAGES as readonly string[]).includes(lang)) return lang as ApiLanguage;
    if (lang === "*") return "en";
  }
  return "en";
}

/** Spanish written when a message was made (zod's own, in its Spanish locale), found by the detail object. */
const spanishOfDetail = new WeakMap<object, string>();

/** Remembers the Spanish of a detail built from a zod issue (route.ts), for localizeError to use. */
export function rememberSpanish(detail: object, spanish: string): void {
  spanishOfDetail.set(detail, spanish);
}

type ZodErrorMap = z.core.$ZodErrorMap<z.core.$ZodIssue>;
const textOf = (r: ReturnType<ZodErrorMap>) => (typeof r === "string" ? r : (r?.message ?? undefined));

/** zod's message in Spanish, when the English one is zod's default (a schema's own message comes from the catalog). */
export function zodSpanish(issue: z.core.$ZodIssue, english: ZodErrorMap, spanish: ZodErrorMap): string | undefined {
  const raw = issue as unknown as Parameters<ZodErrorMap>[0];
  return textOf(english(raw)) === issue.message ? textOf(spanish(raw)) : undefined;
}

/** The sentence the catalog keeps for a code (code.<code>), or internal_error's for a code it lacks. */
export function codeSentence(code: string, lang: ApiLanguage): string {
  return translate(lang, hasKey("en", `errors:code.${code}`) ? `errors:code.${code}` : "errors:code.internal_error");
}

/**
 * An error's message in `lang`: its catalog words; an error without them (one that crossed a process as plain
 * text) says its code's sentence in a language other than English, never English words inside another language.
 */
function messageIn(error: ApiError, lang: ApiLanguage): string {
  if (error.text) return say(error.text, lang);
  return lang === "en" ? error.message : codeSentence(error.code, lang);
}

function detailIn(d: ErrorDetail, lang: ApiLanguage): ErrorDetail {
  const text = detailText(d);
  if (text) return { ...d, message: say(text, lang) };
  if (lang === "es" && spanishOfDetail.has(d)) return { ...d, message: spanishOfDetail.get(d)! };
  return d;
}

/** The message and details an error answers with in `lang`. */
export function localizeError(error: ApiError, lang: ApiLanguage): { message: string; details: ApiError["details"] } {
  if (lang === "en") return { message: error.message, details: error.details };
  const details = Array.isArray(error.details) ? error.details.map((d) => detailIn(d, lang)) : error.details;
  return { message: messageIn(error, lang), details };
}
