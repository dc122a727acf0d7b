import type { BackendReply } from "../backend.js";
import { reply, wordFor, type Lang } from "../language.js";
import type { MonitoringReportView } from "../monitoring-summary.js";
import { driftFeatureName } from "../../monitoring/alert-text.js";
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
    : `${num(m.value)}${m.ci_low !== null && m.ci_high !== null ? ` (${reply(lang, "monitoring.95CI")} ${num(m.ci_low)}–${num(m.ci_high)})` : ""}`;

function lines(r: MonitoringReportView, lang: Lang): string[] {
  const out: string[] = [];
  const d = r.decisions;
  out.push(
    reply(lang, "monitoring.predictions", {
      count: r.predictions,
      decided:
        d.positive_rate === null
          ? ""
          : reply(lang, "monitoring.decided", {
              rate: pct(d.positive_rate),
              positive: d.positive_class ?? "",
              baseline:
                d.baseline_positive_rate === null ? "" : reply(lang, "monitoring.decidedBaseline", { rate: pct(d.baseline_positive_rate) }),
            }),
    }),
  );
  const drifted = r.drift.features.filter((f) => f.drifted).map((f) => quote(driftFeatureName(f.feature, lang), 40));
  out.push(
    reply(lang, "monitoring.inputDrift", {
      status: wordFor(lang, "words.drift", r.drift.status),
      drifted: drifted.length ? ` (${drifted.slice(0, 5).join(", ")})` : "",
    }),
  );
  const o = r.outcomes;
  const p = r.performance;
  if (!o.labelled) out.push(reply(lang, "monitoring.noTrueOutcomeHasBeen"));
  else
    out.push(
      reply(lang, "monitoring.trueOutcomesForOfPredictions", {
        oLabelled: o.labelled,
        oRecords: o.records,
        withCi: withCi(p.realized.sensitivity, lang),
        withCi2: withCi(p.realized.specificity, lang),
        withCi3: withCi(p.model_card.sensitivity, lang),
        withCi4: withCi(p.model_card.specificity, lang),
      }),
    );
  return out;
}

export async function monitoringReply(ctx: ReplyContext, experimentId: number): Promise<BackendReply> {
  const { lang } = ctx;
  const { result: s, references } = await ctx.tools.getMonitoring({ experiment_id: experimentId, days: DAYS });
  if (!s.found) return { reply: notFound(ctx, experimentId), references: [] };
  const exp = `${reply(lang, "monitoring.experiment")} ${s.experiment_id}${s.name ? ` ${quote(s.name, 60)}` : ""}`;
  if (!s.published)
    return {
      reply: reply(lang, "monitoring.hasNoPublishedModelIt", { exp, sStatus: s.status }),
      references,
    };
  const r = s.report;
  const head = reply(lang, "monitoring.lastDaysModelVersion", { exp, dAYS: DAYS, modelVersion: r.model_version });
  const body = r.predictions ? lines(r, lang) : [reply(lang, "monitoring.noPredictionsRecordedYetIt")];
  const tab = reply(lang, "monitoring.detailsInItsMonitoringTab", { experimentId: s.experiment_id });
  return { reply: [head, ...body, tab].join("\n"), references };
}
