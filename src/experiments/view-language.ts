import type { DatasetProblem, DatasetReport } from "../datasets/report.js";
import { messageFromStore, say } from "../errors.js";
import { hasKey, translate, type Language } from "../i18n/index.js";
import { cardWords } from "../reports/model-card/format.js";
import { warningWords } from "../reports/model-card/warning-words.js";
import { progressCatalogKey } from "../contract/progress-messages.js";
import type { Progress } from "./state.js";
import type { ResultWarning } from "./warnings.js";

// An experiment's stored words in its reader's language (Accept-Language, which the dashboard sets to its own):
// why it failed, its dataset report's problems and its result's warnings. Each is kept as a catalog key and its
// values (or, for warnings, the facts they were worded from) beside the English; a report or failure stored before
// keys existed has only its English, which is returned as it was.

/** Why the experiment failed, in `lang`; the stored English when it was stored without catalog words. */
export function failureIn(failureText: unknown, failureReason: string | null, lang: Language): string | null {
  const text = messageFromStore(failureText);
  return text ? say(text, lang) : failureReason;
}

/** The failure's catalog key without its namespace (build.timeout, pipeline.image_unreadable), for API clients. */
export function failureCode(failureText: unknown): string | null {
  const key = messageFromStore(failureText)?.key;
  return key ? key.slice(key.indexOf(":") + 1) : null;
}

/** One dataset problem said in `lang` from its catalog key; a problem stored before keys keeps its English. */
export function problemIn<P extends Pick<DatasetProblem, "message" | "key" | "params">>(p: P, lang: Language): P {
  if (!p.key || !hasKey(lang, p.key, p.params)) return p;
  return { ...p, message: translate(lang, p.key, p.params ?? {}) };
}

/** A running experiment's progress with its message said in `lang` from its catalog key (progress:pipeline.<key>). */
export function progressIn<P>(stored: P, lang: Language): P {
  const p = stored as Partial<Progress> | null;
  const key = p && typeof p === "object" && typeof p.key === "string" ? progressCatalogKey(p.key) : undefined;
  if (lang === "en" || !key || !hasKey(lang, key)) return stored;
  return { ...p, message: translate(lang, key, p?.params ?? {}) } as P;
}

/** A stored dataset report with each keyed problem said in `lang`. */
export function reportIn<R extends Pick<DatasetReport, "errors" | "warnings">>(report: R | null | undefined, lang: Language): R | null {
  if (!report) return null;
  if (lang === "en" || !Array.isArray(report.errors) || !Array.isArray(report.warnings)) return report;
  return { ...report, errors: report.errors.map((p) => problemIn(p, lang)), warnings: report.warnings.map((p) => problemIn(p, lang)) };
}

/**
 * The result's warnings with title and explanation in `lang` (the model card's words, worded from each one's facts,
 * which warningsOf gives when asked): the facts themselves stay out of the API's answer.
 */
export function warningsIn(warnings: ResultWarning[], lang: Language): Omit<ResultWarning, "facts">[] {
  const words = lang === "en" ? undefined : cardWords(lang);
  return warnings.map(({ facts, ...w }) => {
    if (!words) return w;
    const message = facts ? warningWords(w.code, facts, words) : null;
    const titleKey = `model-card:warnings.title.${w.code}`;
    return { ...w, title: hasKey(lang, titleKey) ? translate(lang, titleKey) : w.title, message: message ?? w.message };
  });
}
