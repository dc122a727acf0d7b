// API error messages in the caller's language (Accept-Language), decided once at the edge: the call sites keep
// throwing ApiError with today's English, and errorBody() asks localizeError() for the words. Codes, field names,
// status and the shape of the body never change with the language.
import type { z } from "zod";
import type { ApiError, ErrorDetail } from "../errors.js";
import { SPANISH_BY_CODE, SPANISH_STATUS, SPANISH_TEMPLATES } from "./error-messages-es.js";

export const API_LANGUAGES = ["en", "es"] as const;
export type ApiLanguage = (typeof API_LANGUAGES)[number];

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

interface Template {
  re: RegExp;
  names: string[];
  spanish: string;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function compile([english, spanish]: [string, string]): Template {
  const names: string[] = [];
  const source = english
    .split(/(\{\w+\})/)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return escape(part);
      names.push(m[1]);
      return "([\\s\\S]+?)";
    })
    .join("");
  return { re: new RegExp(`^${source}$`), names, spanish };
}

const TEMPLATES = SPANISH_TEMPLATES.map(compile);
const MAX_TEMPLATE_INPUT = 400;

/** An English message in Spanish by the first template that matches it whole, or undefined. */
export function spanishFromTemplate(message: string): string | undefined {
  // The templates' lazy placeholders backtrack polynomially in the separators a message repeats, and a message can
  // quote user text (a column name, a URL): past this length the caller's fallback (the code's Spanish sentence and
  // the English detail) is used instead of a match whose cost grows with the input.
  if (message.length > MAX_TEMPLATE_INPUT) return undefined;
  for (const t of TEMPLATES) {
    const m = t.re.exec(message);
    if (!m) continue;
    const values = Object.fromEntries(t.names.map((n, i) => [n, m[i + 1]]));
    return t.spanish.replace(/\{(\w+)\}/g, (_, n: string) => (n === "status" ? (SPANISH_STATUS[values[n]] ?? values[n]) : values[n]));
  }
  return undefined;
}

/** Spanish written when a message was made (zod's own, in its Spanish locale), found by the detail object. */
const spanishOfDetail = new WeakMap<object, string>();

/** Remembers the Spanish of a detail built from a zod issue (route.ts), for localizeError to use. */
export function rememberSpanish(detail: object, spanish: string): void {
  spanishOfDetail.set(detail, spanish);
}

type ZodErrorMap = z.core.$ZodErrorMap<z.core.$ZodIssue>;
const textOf = (r: ReturnType<ZodErrorMap>) => (typeof r === "string" ? r : (r?.message ?? undefined));

/** zod's message in Spanish, when the English one is zod's default (a schema's own message is left to the templates). */
export function zodSpanish(issue: z.core.$ZodIssue, english: ZodErrorMap, spanish: ZodErrorMap): string | undefined {
  const raw = issue as unknown as Parameters<ZodErrorMap>[0];
  return textOf(english(raw)) === issue.message ? textOf(spanish(raw)) : undefined;
}

/** The code's sentence, then the English specifics when no template knew them (so nothing said is lost). */
function spanishMessage(code: string, message: string): string {
  const whole = spanishFromTemplate(message);
  if (whole) return whole;
  const general = SPANISH_BY_CODE[code] ?? SPANISH_BY_CODE.internal_error;
  return message && message !== general ? `${general} Detalle (en inglés): ${message}` : general;
}

function spanishDetail(d: ErrorDetail): ErrorDetail {
  if (typeof d.message !== "string") return d;
  const spanish = spanishOfDetail.get(d) ?? spanishFromTemplate(d.message);
  return spanish ? { ...d, message: spanish } : d;
}

/** The message and details an error answers with in `lang`. */
export function localizeError(error: ApiError, lang: ApiLanguage): { message: string; details: ApiError["details"] } {
  if (lang === "en") return { message: error.message, details: error.details };
  const details = Array.isArray(error.details) ? error.details.map(spanishDetail) : error.details;
  return { message: spanishMessage(error.code, error.message), details };
}
