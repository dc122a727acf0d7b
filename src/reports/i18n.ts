// The words of the server's printable reports: a namespace of the one catalog (locales/<lang>/<page>.json at the
// repository root, the files the dashboard and the API errors use), rendered by src/i18n/strict.ts, which throws
// on a missing key or value (test/unit/reports-model-card.test.ts renders every branch in both languages).
export {
  catalog,
  flatten,
  format,
  MissingMessage,
  placeholders,
  REPORT_LANGUAGES,
  translator,
  type Catalog,
  type Params,
  type ReportLanguage,
  type Translator,
} from "../i18n/strict.js";
import { REPORT_LANGUAGES, type ReportLanguage } from "../i18n/strict.js";

/** ?lang= when it names a language the reports speak, else undefined (the caller falls back to Accept-Language). */
export function reportLanguage(value: unknown): ReportLanguage | undefined {
  return (REPORT_LANGUAGES as readonly unknown[]).includes(value) ? (value as ReportLanguage) : undefined;
}
