// The server's side of the one catalog (locales/<lng>/<namespace>.json at the repository root, the same files the
// dashboard loads in web/src/i18n): an i18next instance of its own, read once at start, so anything the server
// says to a person (an API error's message, a detail) is a key and its values, put into words here by language.
// Plurals follow each language's CLDR rules (i18next's _one/_other keys over Intl.PluralRules).
import fs from "node:fs";
import path from "node:path";
import i18next, { type Resource } from "i18next";

export const LANGUAGES = ["en", "es"] as const;
export type Language = (typeof LANGUAGES)[number];

/** The catalog's folder: locales/ at the repository root (src/i18n -> ../../locales). */
export const LOCALES_DIR = path.resolve(import.meta.dirname, "../../locales");

/** Every namespace of every language, as i18next takes them. */
export function readCatalog(dir = LOCALES_DIR): Resource {
  const resources: Resource = {};
  for (const lng of LANGUAGES) {
    const folder = path.join(dir, lng);
    for (const file of fs
      .readdirSync(folder)
      .filter((f) => f.endsWith(".json"))
      .sort())
      (resources[lng] ??= {})[file.slice(0, -5)] = JSON.parse(fs.readFileSync(path.join(folder, file), "utf8")) as Record<string, unknown>;
  }
  return resources;
}

/** A value a message names but its caller did not give: kept visible ({{name}}) and reported to the hook. */
type MissingValueHook = (key: string, name: string) => void;
let onMissingValue: MissingValueHook = () => {};

/** Tests set this to fail on a message rendered without one of its values. */
export function setMissingValueHook(hook: MissingValueHook): void {
  onMissingValue = hook;
}

const resources = readCatalog();
const i18n = i18next.createInstance();
void i18n.init({
  resources,
  ns: Object.keys(resources.en ?? {}),
  defaultNS: "errors",
  lng: "en",
  fallbackLng: "en",
  supportedLngs: [...LANGUAGES],
  nonExplicitSupportedLngs: true,
  load: "languageOnly",
  initAsync: false,
  // Messages go into JSON bodies and logs, not HTML: nothing to escape here (the dashboard's React escapes).
  interpolation: { escapeValue: false },
  returnNull: false,
  missingInterpolationHandler: (text: string, value: RegExpMatchArray) => {
    onMissingValue(text, value[1]?.trim() ?? "");
    return value[0];
  },
});

/** One namespace of one language as read from its file (the model card renders it with its own strict formatter). */
export function catalogNamespace(lng: Language, ns: string): Record<string, unknown> {
  const found = resources[lng]?.[ns];
  if (!found) throw new Error(`no catalog locales/${lng}/${ns}.json`);
  return found as Record<string, unknown>;
}

/** A catalog key (namespace:key) in `lng`, with its values. */
export function translate(lng: Language, key: string, values: Record<string, unknown> = {}): string {
  return i18n.t(key, { ...values, lng });
}

/** Whether the catalog has `key` in `lng` itself (not by falling back to English); a plural key by its `count`. */
export function hasKey(lng: Language, key: string, values: { count?: unknown } = {}): boolean {
  return i18n.exists(key, { lng, fallbackLng: false, ...(typeof values.count === "number" ? { count: values.count } : {}) });
}
