import type { AlertRow } from "./alert-repository.js";
import { featureComponent } from "./baseline.js";
import { translator, type Translator } from "../i18n/strict.js";
import { LANGUAGES } from "../i18n/index.js";

/**
 * An alert in plain words, Spanish and English, for the API, the e-mail and the webhook. Built from the rule and the
 * figures only: an alert names input columns and numbers, never a patient's value. Every sentence is a key of the
 * one catalog (locales/<lang>/monitoring.json, "alertText.*" and the dashboard's "alerts.rules.*"); the figures are
 * formatted here and put in as values. A missing key or value throws (src/i18n/strict.ts) rather than send a key.
 */

export type Lang = "en" | "es";

const texts = Object.fromEntries(LANGUAGES.map((lng) => [lng, translator(lng, "monitoring")])) as Record<Lang, Translator>;

/** A message of the monitoring catalog in `lang`. */
export const alertWords = (lang: Lang, key: string, params?: Record<string, string | number>) => texts[lang].t(key, params);

/** The catalog's word for a code, or the code itself when the catalog has none (a code newer than the catalog). */
const wordFor = (lang: Lang, group: string, code: string) =>
  texts[lang].has(`${group}.${code}`) ? texts[lang].t(`${group}.${code}`) : code;

const pct = (x: unknown) => (typeof x === "number" ? `${(x * 100).toFixed(1)} %` : "?");
const num = (x: unknown, digits = 2) => (typeof x === "number" ? x.toFixed(digits) : "?");
/** A count or a threshold as written. */
const n = (x: unknown) => (typeof x === "number" ? String(x) : "?");

type Interval = { value: number | null; ci_low: number | null; ci_high: number | null } | null | undefined;

/** A drift row's name in words where it is not a column's own name: the score, a component of the image features. */
export function driftFeatureName(feature: string, lang: Lang): string {
  if (feature === "score") return alertWords(lang, "alertText.score");
  const c = featureComponent(feature);
  if (c !== undefined) return alertWords(lang, "alertText.featureComponent", { n: c });
  return feature;
}

/** The values each rule's sentence names, from the alert's figures. */
function summaryValues(a: Pick<AlertRow, "rule" | "details">, lang: Lang): Record<string, string | number> | undefined {
  const d = a.details;
  switch (a.rule) {
    case "drift": {
      const features = ((d.features as Array<{ feature: string; severity: string }>) ?? [])
        .map((f) =>
          alertWords(lang, "alertText.featureSeverity", {
            feature: driftFeatureName(f.feature, lang),
            severity: wordFor(lang, "severity", f.severity),
          }),
        )
        .join(", ");
      return { features };
    }
    case "unfamiliar_inputs":
      return { rate: pct(d.rate), unfamiliar: n(d.unfamiliar), checked: n(d.checked), maxRate: pct(d.max_rate) };
    case "sensitivity_below_card": {
      const r = d.realized as Interval;
      const c = d.model_card as Interval;
      return { value: pct(r?.value), low: pct(r?.ci_low), high: pct(r?.ci_high), card: pct(c?.value) };
    }
    case "predictions_stopped":
      return { hours: n(d.quiet_hours), daily: num(d.daily_before, 0) };
    case "latency":
      return {
        p95: typeof d.p95_ms_at_most === "number" ? `${d.p95_ms_at_most} ms` : alertWords(lang, "alertText.latencyOver"),
        threshold: n(d.p95_ms_threshold),
      };
    default:
      return undefined;
  }
}

export function alertSummary(a: Pick<AlertRow, "rule" | "details" | "experimentId">, lang: Lang): string {
  const model = alertWords(lang, "alertText.model", { id: a.experimentId });
  const values = summaryValues(a, lang);
  return values
    ? alertWords(lang, `alertText.summary.${a.rule}`, { model, ...values })
    : alertWords(lang, "alertText.summary.other", { model, rule: a.rule });
}

/** The rule's name as a person reads it (the dashboard's own words for it), or the rule's code when it has none. */
export function ruleTitle(rule: string, lang: Lang): string {
  return wordFor(lang, "alerts.rules", rule);
}

/** The alert's severity as a person reads it. */
export function severityWord(severity: string, lang: Lang): string {
  return wordFor(lang, "alerts.severity", severity);
}
