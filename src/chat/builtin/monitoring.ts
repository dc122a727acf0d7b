import type { BackendReply } from "../backend.js";
import { say, type Lang } from "../language.js";
import type { MonitoringReportView } from "../monitoring-summary.js";
import { quote } from "../safety.js";
import type { ReplyContext } from "./context.js";
import { notFound } from "./answers.js";
import { num } from "./templates.js";

// "¿cómo va el modelo de mama este mes?" (issue 49): the monitoring report of the model the resolver picked, for
// the last 30 days, in a few lines. No traffic or no outcome yet is said plainly, never shown as a zero figure.

const DAYS = 30;
const pct = (x: number | null) => (x === null ? "n/a" : `${(x * 100).toFixed(1)}%`);
type Iv = { value: number | null; ci_low: number | null; ci_high: number | null } | null;
const withCi = (m: Iv, lang: Lang) =>
  !m || m.value === null
    ? "n/a"
    : `${num(m.value)}${m.ci_low !== null && m.ci_high !== null ? ` (${say(lang, "95% CI", "IC 95%")} ${num(m.ci_low)}–${num(m.ci_high)})` : ""}`;

const DRIFT_ES: Record<string, string> = {
  stable: "estable",
  watch: "a vigilar",
  drift: "con deriva",
  not_enough_data: "aún sin datos suficientes",
  no_baseline: "sin referencia (modelo anterior a la monitorización)",
};

function lines(r: MonitoringReportView, lang: Lang): string[] {
  const out: string[] = [];
  const d = r.decisions;
  out.push(
    say(
      lang,
      `${r.predictions} predictions${d.positive_rate !== null ? `; ${pct(d.positive_rate)} decided \`${d.positive_class}\`${d.baseline_positive_rate !== null ? ` (${pct(d.baseline_positive_rate)} on its validation and test patients)` : ""}` : ""}.`,
      `${r.predictions} predicciones${d.positive_rate !== null ? `; ${pct(d.positive_rate)} decididas \`${d.positive_class}\`${d.baseline_positive_rate !== null ? ` (${pct(d.baseline_positive_rate)} en sus pacientes de validación y test)` : ""}` : ""}.`,
    ),
  );
  const drifted = r.drift.features.filter((f) => f.drifted).map((f) => quote(f.feature, 40));
  out.push(
    say(
      lang,
      `Input drift: ${r.drift.status.replace(/_/g, " ")}${drifted.length ? ` (${drifted.slice(0, 5).join(", ")})` : ""}.`,
      `Deriva de las entradas: ${DRIFT_ES[r.drift.status] ?? r.drift.status}${drifted.length ? ` (${drifted.slice(0, 5).join(", ")})` : ""}.`,
    ),
  );
  const o = r.outcomes;
  const p = r.performance;
  if (!o.labelled)
    out.push(
      say(
        lang,
        "No true outcome has been sent back yet, so its real sensitivity and specificity are not known; POST /v1/models/{id}/outcomes with the biopsy or discharge result adds them.",
        "Aún no se ha enviado ningún resultado real, así que su sensibilidad y especificidad reales no se conocen; POST /v1/models/{id}/outcomes con el resultado de la biopsia o del alta las añade.",
      ),
    );
  else
    out.push(
      say(
        lang,
        `True outcomes for ${o.labelled} of ${o.records} predictions: realized sensitivity ${withCi(p.realized.sensitivity, lang)}, specificity ${withCi(p.realized.specificity, lang)}; the model card said ${withCi(p.model_card.sensitivity, lang)} and ${withCi(p.model_card.specificity, lang)}.`,
        `Resultados reales de ${o.labelled} de ${o.records} predicciones: sensibilidad real ${withCi(p.realized.sensitivity, lang)}, especificidad ${withCi(p.realized.specificity, lang)}; la ficha del modelo decía ${withCi(p.model_card.sensitivity, lang)} y ${withCi(p.model_card.specificity, lang)}.`,
      ),
    );
  return out;
}

export async function monitoringReply(ctx: ReplyContext, experimentId: number): Promise<BackendReply> {
  const { lang } = ctx;
  const { result: s, references } = await ctx.tools.getMonitoring({ experiment_id: experimentId, days: DAYS });
  if (!s.found) return { reply: notFound(ctx, experimentId), references: [] };
  const exp = `${say(lang, "Experiment", "Experimento")} ${s.experiment_id}${s.name ? ` ${quote(s.name, 60)}` : ""}`;
  if (!s.published)
    return {
      reply: say(
        lang,
        `${exp} has no published model (it is **${s.status}**), so nothing has been monitored: monitoring starts with its first prediction.`,
        `${exp} no tiene modelo publicado (está **${s.status}**), así que no hay nada monitorizado: la monitorización empieza con su primera predicción.`,
      ),
      references,
    };
  const r = s.report;
  const head = say(
    lang,
    `${exp}, last ${DAYS} days (model version ${r.model_version}):`,
    `${exp}, últimos ${DAYS} días (versión ${r.model_version} del modelo):`,
  );
  const body = r.predictions
    ? lines(r, lang)
    : [
        say(
          lang,
          "No predictions recorded yet: it has had no traffic in this period, so there is no drift, decision rate or outcome to report.",
          "Aún no hay predicciones registradas: no ha tenido tráfico en este periodo, así que no hay deriva, tasa de decisiones ni resultados reales que contar.",
        ),
      ];
  const tab = say(
    lang,
    `Details in its Monitoring tab: /experiments/${s.experiment_id}`,
    `Detalles en su pestaña Monitorización: /experiments/${s.experiment_id}`,
  );
  return { reply: [head, ...body, tab].join("\n"), references };
}
