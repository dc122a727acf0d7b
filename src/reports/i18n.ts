import { readFileSync } from "node:fs";
import { join } from "node:path";

// The words of the server's printable reports, from one JSON catalog per language and page
// (src/reports/locales/<lang>/<page>.json; test/unit/reports-model-card.test.ts keeps the two languages in step).
// Messages use ICU-style placeholders, "{name}"; a plural picks "<key>_one" / "<key>_other" by Intl.PluralRules
// from the `count` parameter, as i18next does. A missing key or parameter throws: a page must never print a key
// or an unfilled "{name}" to a reader (the tests render every branch in both languages).

export const REPORT_LANGUAGES = ["en", "es"] as const;
export type ReportLanguage = (typeof REPORT_LANGUAGES)[number];

export type Catalog = { [key: string]: string | Catalog };
export type Params = Record<string, string | number>;

const LOCALES = join(import.meta.dirname, "locales");

/** A page's catalog in one language, read once. */
const loaded = new Map<string, Catalog>();
export function catalog(lang: ReportLanguage, page: string): Catalog {
  const id = `${lang}/${page}`;
  let c = loaded.get(id);
  if (!c) {
    c = JSON.parse(readFileSync(join(LOCALES, lang, `${page}.json`), "utf8")) as Catalog;
    loaded.set(id, c);
  }
  return c;
}

/** Every "a.b.c" key of a catalog with its message. */
export function flatten(c: Catalog, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(c)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === "string") out.set(key, v);
    else for (const [kk, vv] of flatten(v, key)) out.set(kk, vv);
  }
  return out;
}

/** The placeholders a message names ("{name}"), in order of first use. */
export function placeholders(message: string): string[] {
  return [...new Set([...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))];
}

export class MissingMessage extends Error {}

/** One message with its placeholders filled; the values are plain text (the page's engine escapes them). */
export function format(message: string, params: Params = {}, where = "message"): string {
  return message.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new MissingMessage(`${where}: no value for {${name}}`);
    return String(v);
  });
}

export interface Translator {
  lang: ReportLanguage;
  /** The message of `key` with its placeholders filled. */
  t(key: string, params?: Params): string;
  /** Whether the catalog has `key` (for words looked up by a code that may be new, e.g. a calibration method). */
  has(key: string): boolean;
  /** The raw message of `key` (for rich text: the page splits out its <b> parts itself). */
  message(key: string, params?: Params): string;
}

export function translator(lang: ReportLanguage, page: string): Translator {
  const messages = flatten(catalog(lang, page));
  const plural = new Intl.PluralRules(lang);
  const counts = new Intl.NumberFormat(lang === "es" ? "es-ES" : "en-US");
  const message = (key: string, params?: Params): string => {
    const count = params?.count;
    const plain = messages.get(key);
    const chosen = typeof count === "number" && plain === undefined ? messages.get(`${key}_${plural.select(count)}`) : plain;
    const found = chosen ?? messages.get(`${key}_other`);
    if (found === undefined) throw new MissingMessage(`${lang}/${page}: no message "${key}"`);
    return found;
  };
  return {
    lang,
    message,
    // A plural's count is written the reader's way ("2,000" / "2000"), after it chose the message.
    t: (key, params) =>
      format(
        message(key, params),
        typeof params?.count === "number" ? { ...params, count: counts.format(params.count) } : params,
        `${lang}/${page} "${key}"`,
      ),
    has: (key) => messages.has(key),
  };
}

/** ?lang= when it names a language the reports speak, else undefined (the caller falls back to Accept-Language). */
export function reportLanguage(value: unknown): ReportLanguage | undefined {
  return (REPORT_LANGUAGES as readonly unknown[]).includes(value) ? (value as ReportLanguage) : undefined;
}
