import { catalogNamespace } from "./index.js";

// Server-rendered text from the one catalog (locales/<lang>/<namespace>.json): the model card and the chat's replies.
// Messages use the catalog's placeholders, "{{name}}"; a plural picks "<key>_one" / "<key>_other" by Intl.PluralRules
// from the `count` parameter, as i18next does. A missing key or value throws, which i18next's own t() would not: a
// page or a reply must never print a key or an unfilled "{{name}}" to a reader. The values are put in once and never
// read again as a message (i18next would expand a "$t(...)" inside a user's column name).

export const REPORT_LANGUAGES = ["en", "es"] as const;
export type ReportLanguage = (typeof REPORT_LANGUAGES)[number];

export type Catalog = { [key: string]: string | Catalog };
export type Params = Record<string, string | number>;

/** A namespace of the catalog in one language (as the server read it at start). */
export function catalog(lang: ReportLanguage, page: string): Catalog {
  return catalogNamespace(lang, page) as Catalog;
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

/** The placeholders a message names ("{{name}}"), in order of first use. */
export function placeholders(message: string): string[] {
  return [...new Set([...message.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]))];
}

export class MissingMessage extends Error {}

/** One message with its placeholders filled; the values are plain text (the page's engine escapes them). */
export function format(message: string, params: Params = {}, where = "message"): string {
  return message.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new MissingMessage(`${where}: no value for {{${name}}}`);
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
