import type { AlertRow } from "./alert-repository.js";
import { featureComponent } from "./baseline.js";

/** The drift severities as the Spanish text says them (the English text uses the API's words). */
const SEVERITY_ES: Record<string, string> = { high: "alta", medium: "media", low: "baja", none: "ninguna" };

/**
 * An alert in plain words, Spanish and English, for the API, the e-mail and the webhook. Built from the rule and the
 * figures only: an alert names input columns and numbers, never a patient's value.
 */

export type Lang = "en" | "es";

const pct = (x: unknown) => (typeof x === "number" ? `${(x * 100).toFixed(1)} %` : "?");
const num = (x: unknown, digits = 2) => (typeof x === "number" ? x.toFixed(digits) : "?");
/** A count or a threshold as written. */
const n = (x: unknown) => (typeof x === "number" ? String(x) : "?");

type Interval = { value: number | null; ci_low: number | null; ci_high: number | null } | null | undefined;

/** A drift row's name in words where it is not a column's own name: the score, a component of the image features. */
export function driftFeatureName(feature: string, lang: Lang): string {
  if (feature === "score") return lang === "es" ? "la puntuación" : "score";
  const c = featureComponent(feature);
  if (c !== undefined) return lang === "es" ? `rasgos de la imagen (componente ${c})` : `image features (component ${c})`;
  return feature;
}

export function alertSummary(a: Pick<AlertRow, "rule" | "details" | "experimentId">, lang: Lang): string {
  const d = a.details;
  const model = lang === "es" ? `Modelo ${a.experimentId}` : `Model ${a.experimentId}`;
  switch (a.rule) {
    case "drift": {
      const features = ((d.features as Array<{ feature: string; severity: string }>) ?? [])
        .map((f) =>
          lang === "es"
            ? `${driftFeatureName(f.feature, lang)} (${SEVERITY_ES[f.severity] ?? f.severity})`
            : `${driftFeatureName(f.feature, lang)} (${f.severity})`,
        )
        .join(", ");
      return lang === "es"
        ? `${model}: los pacientes recientes no se parecen a los de la prueba en ${features}. Revise si cambió un aparato, un laboratorio, una unidad o el tipo de pacientes.`
        : `${model}: recent patients do not look like the test patients in ${features}. Check whether a device, a lab, a unit or the patient mix changed.`;
    }
    case "unfamiliar_inputs":
      return lang === "es"
        ? `${model}: ${pct(d.rate)} de las entradas revisadas (${n(d.unfamiliar)} de ${n(d.checked)}) no se parecen a los datos de entrenamiento (límite ${pct(d.max_rate)}).`
        : `${model}: ${pct(d.rate)} of the checked inputs (${n(d.unfamiliar)} of ${n(d.checked)}) do not look like the training data (limit ${pct(d.max_rate)}).`;
    case "sensitivity_below_card": {
      const r = d.realized as Interval;
      const c = d.model_card as Interval;
      return lang === "es"
        ? `${model}: la sensibilidad observada con los resultados reales es ${pct(r?.value)} (IC 95 % ${pct(r?.ci_low)}–${pct(r?.ci_high)}), por debajo del ${pct(c?.value)} de la ficha del modelo. El modelo puede estar perdiendo casos positivos.`
        : `${model}: the sensitivity seen on true outcomes is ${pct(r?.value)} (95 % CI ${pct(r?.ci_low)}–${pct(r?.ci_high)}), below the model card's ${pct(c?.value)}. The model may be missing positive cases.`;
    }
    case "predictions_stopped":
      return lang === "es"
        ? `${model}: ninguna predicción en ${n(d.quiet_hours)} horas, tras unas ${num(d.daily_before, 0)} al día la semana anterior. Compruebe que el sistema que lo llama sigue funcionando.`
        : `${model}: no prediction in ${n(d.quiet_hours)} hours, after about ${num(d.daily_before, 0)} a day the week before. Check that the system calling it still works.`;
    case "latency": {
      const p95 = typeof d.p95_ms_at_most === "number" ? `${d.p95_ms_at_most} ms` : lang === "es" ? "más de 5 s" : "over 5 s";
      return lang === "es"
        ? `${model}: el 95 % de las respuestas tarda hasta ${p95}, por encima del límite de ${n(d.p95_ms_threshold)} ms.`
        : `${model}: 95 % of answers take up to ${p95}, above the limit of ${n(d.p95_ms_threshold)} ms.`;
    }
    default:
      return `${model}: ${a.rule}`;
  }
}

/** The rule's name as a person reads it. */
export const RULE_TITLES: Record<string, Record<Lang, string>> = {
  drift: { en: "Input drift", es: "Deriva de las entradas" },
  unfamiliar_inputs: { en: "Unfamiliar inputs", es: "Entradas desconocidas" },
  sensitivity_below_card: { en: "Sensitivity below the model card", es: "Sensibilidad por debajo de la ficha" },
  predictions_stopped: { en: "Predictions stopped", es: "Las predicciones se detuvieron" },
  latency: { en: "Slow answers", es: "Respuestas lentas" },
};
