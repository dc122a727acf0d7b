import type { BackendReply } from "../backend.js";
import type { ExperimentFacts, MetricValue } from "../facts.js";
import { say, type Lang } from "../language.js";
import { quote } from "../safety.js";
import { mainMetric, metricLabel, metricLine, num, pageLink, reliableEnd, testPatients } from "./templates.js";
import type { ReplyContext } from "./context.js";

// The user's own figures in plain words (issue 39): what the 95% interval of this AUC means, what this threshold
// trades, sensitivity against specificity. Each reply leads with the experiment's numbers and ends with its page.

const exp = (f: ExperimentFacts, lang: Lang) => say(lang, `experiment ${f.experiment_id}`, `experimento ${f.experiment_id}`);
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
/** "93 of every 100": a share as people, the way a clinician says it. */
const perHundred = (v: number) => Math.round(v * 100);

/** The positive class's name of a two-class model, else undefined. */
const positiveClass = (f: ExperimentFacts) => (f.classes && Object.keys(f.classes).length === 2 ? f.classes["1"] : undefined);

export function intervalReply(ctx: ReplyContext, f: ExperimentFacts, metric?: string): BackendReply {
  const { lang } = ctx;
  const name = metric && f.metrics[metric] ? metric : mainMetric(f);
  const m = name ? f.metrics[name] : undefined;
  if (!name || !m || m.ci_low === null || m.ci_high === null)
    return {
      reply: say(
        lang,
        `${cap(exp(f, lang))} has no test metric with an interval yet (it is **${f.status}**).`,
        `El ${exp(f, lang)} aún no tiene métricas de test con intervalo (está **${f.status}**).`,
      ),
      references: [],
    };
  const width = m.ci_high - m.ci_low;
  const wide =
    width > 0.2
      ? say(
          lang,
          "It is wide: the estimate is uncertain, and more test patients would narrow it.",
          "Es ancho: la estimación es incierta y más pacientes de test lo estrecharían.",
        )
      : width > 0.1
        ? say(lang, "It is moderately wide.", "Es moderadamente ancho.")
        : say(lang, "It is narrow.", "Es estrecho.");
  const label = metricLabel(name, lang);
  return {
    reply: say(
      lang,
      `${cap(exp(f, lang))}'s ${label} is ${num(m.value)}, with a 95% interval of ${num(m.ci_low)}–${num(m.ci_high)}${testPatients(f, lang)}. In plain words: tested on other patients like these, its ${label} would most likely fall between ${num(m.ci_low)} and ${num(m.ci_high)}, so ${reliableEnd(name, m, lang)}. ${wide} The interval comes from a bootstrap over the test patients; it says nothing about patients unlike yours (another site, scanner or population).\n${pageLink(f.experiment_id, lang)}`,
      `El ${label} del ${exp(f, lang)} es ${num(m.value)}, con un intervalo del 95% de ${num(m.ci_low)}–${num(m.ci_high)}${testPatients(f, lang)}. Dicho llanamente: probado con otros pacientes como estos, su ${label} caería muy probablemente entre ${num(m.ci_low)} y ${num(m.ci_high)}, así que ${reliableEnd(name, m, lang)}. ${wide} El intervalo sale de un bootstrap sobre los pacientes de test; no dice nada de pacientes distintos a los suyos (otro centro, otro equipo u otra población).\n${pageLink(f.experiment_id, lang)}`,
    ),
    references: [],
  };
}

/** Sensitivity and specificity when the model has them, else the macro recall it does have. */
function pair(f: ExperimentFacts): { finds?: { name: string; m: MetricValue }; spares?: { name: string; m: MetricValue } } {
  const findsName = f.metrics.sensitivity ? "sensitivity" : f.metrics.recall ? "recall" : undefined;
  const spares = f.metrics.specificity;
  return {
    ...(findsName ? { finds: { name: findsName, m: f.metrics[findsName] } } : {}),
    ...(spares ? { spares: { name: "specificity", m: spares } } : {}),
  };
}

function tradeLines(f: ExperimentFacts, lang: Lang): string[] {
  const { finds, spares } = pair(f);
  const positive = positiveClass(f);
  const cases = positive ? quote(positive, 40) : say(lang, "the condition", "la condición");
  const lines: string[] = [];
  if (finds)
    lines.push(
      say(
        lang,
        `- ${metricLine(finds.name, finds.m)}: it finds about ${perHundred(finds.m.value)} of every 100 patients with ${cases}, and misses the rest.`,
        `- ${metricLine(finds.name, finds.m, lang)}: encuentra unos ${perHundred(finds.m.value)} de cada 100 pacientes con ${cases} y se le escapan los demás.`,
      ),
    );
  if (spares)
    lines.push(
      say(
        lang,
        `- ${metricLine(spares.name, spares.m)}: it leaves about ${perHundred(spares.m.value)} of every 100 patients without ${cases} alone; the other ${100 - perHundred(spares.m.value)} are false alarms.`,
        `- ${metricLine(spares.name, spares.m, lang)}: deja tranquilos a unos ${perHundred(spares.m.value)} de cada 100 pacientes sin ${cases}; los otros ${100 - perHundred(spares.m.value)} son falsas alarmas.`,
      ),
    );
  return lines;
}

export function thresholdReply(ctx: ReplyContext, f: ExperimentFacts): BackendReply {
  const { lang } = ctx;
  if (!f.thresholds)
    return {
      reply: say(
        lang,
        `${cap(exp(f, lang))} has no decision threshold${f.model ? " (its problem type uses none)" : " (no published model yet)"}.`,
        `El ${exp(f, lang)} no tiene umbral de decisión${f.model ? " (su tipo de problema no lo usa)" : " (aún no hay modelo publicado)"}.`,
      ),
      references: [],
    };
  const positive = positiveClass(f);
  const t = positive ? num(f.thresholds[1]) : f.thresholds.map(num).join(", ");
  const rule = f.threshold_rule
    ? say(
        lang,
        `, chosen by ${f.threshold_rule} on the validation patients`,
        `, elegido por ${f.threshold_rule} con los pacientes de validación`,
      )
    : "";
  const lead = positive
    ? say(
        lang,
        `${cap(exp(f, lang))} calls a case ${quote(positive, 40)} when its score is at least ${t}${rule}.`,
        `El ${exp(f, lang)} llama ${quote(positive, 40)} a un caso cuando su puntuación llega a ${t}${rule}.`,
      )
    : say(
        lang,
        `${cap(exp(f, lang))}'s thresholds, one per class: ${t}${rule}.`,
        `Umbrales del ${exp(f, lang)}, uno por clase: ${t}${rule}.`,
      );
  const lines = [
    lead,
    say(lang, `At that threshold,${testPatients(f, lang)}:`, `Con ese umbral,${testPatients(f, lang)}:`),
    ...tradeLines(f, lang),
  ];
  lines.push(
    say(
      lang,
      `A lower threshold finds more cases but raises more false alarms; a higher one the opposite. I can't change it: the result page's Operating point chooses and saves another (a new model version). ${pageLink(f.experiment_id, lang)}`,
      `Un umbral más bajo encuentra más casos pero da más falsas alarmas; uno más alto, lo contrario. Yo no puedo cambiarlo: el punto de operación de la página de resultados elige y guarda otro (una nueva versión del modelo). ${pageLink(f.experiment_id, lang)}`,
    ),
  );
  return { reply: lines.join("\n"), references: [] };
}

export function sensSpecReply(ctx: ReplyContext, f: ExperimentFacts): BackendReply {
  const { lang } = ctx;
  const lines = [
    say(
      lang,
      `Sensitivity is the share of patients who have the condition that the model finds; specificity is the share of those who do not that it leaves alone. For ${exp(f, lang)}${f.thresholds && positiveClass(f) ? ` at its threshold (${num(f.thresholds[1])})` : ""},${testPatients(f, lang)}:`,
      `La sensibilidad es la proporción de pacientes con la condición que el modelo encuentra; la especificidad, la de pacientes sin ella que deja tranquilos. Para el ${exp(f, lang)}${f.thresholds && positiveClass(f) ? ` con su umbral (${num(f.thresholds[1])})` : ""},${testPatients(f, lang)}:`,
    ),
    ...tradeLines(f, lang),
  ];
  if (!pair(f).spares)
    lines.push(
      say(
        lang,
        "It has no specificity figure (only two-class models have one).",
        "No tiene cifra de especificidad (solo la tienen los modelos de dos clases).",
      ),
    );
  lines.push(
    say(
      lang,
      `Raising the threshold trades sensitivity for specificity. ${pageLink(f.experiment_id, lang)}`,
      `Subir el umbral cambia sensibilidad por especificidad. ${pageLink(f.experiment_id, lang)}`,
    ),
  );
  return { reply: lines.join("\n"), references: [] };
}
