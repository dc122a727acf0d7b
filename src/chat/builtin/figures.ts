import type { BackendReply } from "../backend.js";
import type { ExperimentFacts, MetricValue } from "../facts.js";
import { reply, type Lang } from "../language.js";
import { quote } from "../safety.js";
import { mainMetric, metricLabel, metricLine, num, pageLink, reliableEnd, testPatients } from "./templates.js";
import type { ReplyContext } from "./context.js";

// The user's own figures in plain words (issue 39): what the 95% interval of this AUC means, what this threshold
// trades, sensitivity against specificity. Each reply leads with the experiment's numbers and ends with its page.

const exp = (f: ExperimentFacts, lang: Lang) => reply(lang, "figures.experiment", { experimentId: f.experiment_id });
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
      reply: cap(reply(lang, "figures.hasNoTestMetricWith", { exp: exp(f, lang), fStatus: f.status })),
      references: [],
    };
  const width = m.ci_high - m.ci_low;
  const wide =
    width > 0.2
      ? reply(lang, "figures.itIsWideTheEstimate")
      : width > 0.1
        ? reply(lang, "figures.itIsModeratelyWide")
        : reply(lang, "figures.itIsNarrow");
  const label = metricLabel(name, lang);
  return {
    reply: cap(
      reply(lang, "figures.sIsWithA95", {
        exp: exp(f, lang),
        label,
        mValue: num(m.value),
        ciLow: num(m.ci_low),
        ciHigh: num(m.ci_high),
        testPatients: testPatients(f, lang),
        reliableEnd: reliableEnd(name, m, lang),
        wide,
        pageLink: pageLink(f.experiment_id, lang),
      }),
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
  const cases = positive ? quote(positive, 40) : reply(lang, "figures.theCondition");
  const lines: string[] = [];
  if (finds)
    lines.push(
      reply(lang, "figures.itFindsAboutOfEvery", {
        metricLine: metricLine(finds.name, finds.m, lang),
        perHundred: perHundred(finds.m.value),
        cases,
      }),
    );
  if (spares)
    lines.push(
      reply(lang, "figures.itLeavesAboutOfEvery", {
        metricLine: metricLine(spares.name, spares.m, lang),
        perHundred: perHundred(spares.m.value),
        cases,
        falseAlarms: 100 - perHundred(spares.m.value),
      }),
    );
  return lines;
}

export function thresholdReply(ctx: ReplyContext, f: ExperimentFacts): BackendReply {
  const { lang } = ctx;
  if (!f.thresholds)
    return {
      reply: cap(reply(lang, f.model ? "figures.noThresholdByProblemType" : "figures.noThresholdNoModel", { exp: exp(f, lang) })),
      references: [],
    };
  const positive = positiveClass(f);
  const t = positive ? num(f.thresholds[1]) : f.thresholds.map(num).join(", ");
  const rule = f.threshold_rule ? reply(lang, "figures.chosenByOnTheValidation", { thresholdRule: f.threshold_rule }) : "";
  const lead = positive
    ? cap(reply(lang, "figures.callsACaseWhenIts", { exp: exp(f, lang), positive: quote(positive, 40), t, rule }))
    : cap(reply(lang, "figures.sThresholdsOnePerClass", { exp: exp(f, lang), t, rule }));
  const lines = [lead, reply(lang, "figures.atThatThreshold", { testPatients: testPatients(f, lang) }), ...tradeLines(f, lang)];
  lines.push(reply(lang, "figures.aLowerThresholdFindsMore", { pageLink: pageLink(f.experiment_id, lang) }));
  return { reply: lines.join("\n"), references: [] };
}

export function sensSpecReply(ctx: ReplyContext, f: ExperimentFacts): BackendReply {
  const { lang } = ctx;
  const lines = [
    reply(lang, "figures.sensitivityAndSpecificity", {
      exp: exp(f, lang),
      threshold: f.thresholds && positiveClass(f) ? reply(lang, "figures.atItsThreshold", { t: num(f.thresholds[1]) }) : "",
      testPatients: testPatients(f, lang),
    }),
    ...tradeLines(f, lang),
  ];
  if (!pair(f).spares) lines.push(reply(lang, "figures.itHasNoSpecificityFigure"));
  lines.push(reply(lang, "figures.raisingTheThresholdTradesSensitivity", { pageLink: pageLink(f.experiment_id, lang) }));
  return { reply: lines.join("\n"), references: [] };
}
