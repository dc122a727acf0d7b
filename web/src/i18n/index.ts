/// <reference types="vite/client" />
import i18n, { type Resource } from "i18next";
import LanguageDetector from "i18next-browser-languagedetector";
import { initReactI18next } from "react-i18next";
import { setRuleRenderer } from "../../../src/i18n/rule-text";

/** The dashboard's languages; English is the fallback for any other browser language and for a missing string. */
export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "es", name: "Español" },
] as const;
export type Language = (typeof LANGUAGES)[number]["code"];

/** Where the Account page's choice is kept; without one, the browser's language decides. */
export const LANGUAGE_STORAGE_KEY = "builder.language";

// The one catalog of the repository (locales/<lng>/<namespace>.json at its root), shared with the server
// (src/i18n): every namespace is picked up here, so a new one (a page's, a panel's) is one pair of files and no
// change to this one. Eager: the strings are small and a page must not flash untranslated. The server's own
// namespaces (errors) come along, so the dashboard can say an API error's code in its own words too.
const files = import.meta.glob<{ default: Record<string, unknown> }>("../../../locales/*/*.json", { eager: true });

export function resourcesFrom(modules: Record<string, { default: Record<string, unknown> }>): Resource {
  const resources: Resource = {};
  for (const [file, mod] of Object.entries(modules)) {
    const m = /\/locales\/([^/]+)\/([^/]+)\.json$/.exec(file);
    if (!m) continue;
    (resources[m[1]] ??= {})[m[2]] = mod.default;
  }
  return resources;
}

const resources = resourcesFrom(files);

void i18n
  .use(LanguageDetector)
  .use(initReactI18next)
  .init({
    resources,
    ns: Object.keys(resources.en ?? {}),
    defaultNS: "common",
    fallbackLng: "en",
    supportedLngs: LANGUAGES.map((l) => l.code),
    // "es-MX", "es-419" and "en-GB" use the plain language's strings.
    nonExplicitSupportedLngs: true,
    load: "languageOnly",
    initAsync: false,
    interpolation: { escapeValue: false }, // React escapes
    returnNull: false,
    detection: {
      order: ["localStorage", "navigator"],
      lookupLocalStorage: LANGUAGE_STORAGE_KEY,
      // Only an explicit choice is stored (setLanguage), so a browser whose language changes is followed.
      caches: [],
    },
  });

function syncDocumentLanguage(lng: string) {
  if (typeof document !== "undefined") document.documentElement.lang = currentLanguage(lng);
}
i18n.on("languageChanged", syncDocumentLanguage);

// The server's request rules, which the New experiment form checks with (src/experiments/request-rules.ts), name
// keys of the errors catalog: said here in the page's language.
setRuleRenderer((key, values) => i18n.t(`errors:${key}`, { ...values }));
syncDocumentLanguage(i18n.language);

/** "es-MX" -> "es"; anything else unsupported -> "en". */
export function currentLanguage(lng: string | undefined = i18n.resolvedLanguage ?? i18n.language): Language {
  const base = (lng ?? "en").toLowerCase().split("-")[0];
  return LANGUAGES.some((l) => l.code === base) ? (base as Language) : "en";
}

/** The Account page's switch: changes the dashboard at once and remembers the choice in this browser. */
export async function setLanguage(lng: Language): Promise<void> {
  try {
    localStorage.setItem(LANGUAGE_STORAGE_KEY, lng);
  } catch {
    // Storage refused (private mode): the choice holds for this visit only.
  }
  await i18n.changeLanguage(lng);
}

export default i18n;
