import type { ExperimentFacts, MetricValue } from "../facts.js";
import type { Glossary } from "../glossary.js";
import { quote } from "../safety.js";
import { LOWER_IS_BETTER } from "../tools.js";
import { hasReply, reply, type Lang } from "../language.js";
import { warningTitle } from "./warning-words.js";
import type { PublishedModel } from "../tools.js";
import { codeMeaning } from "./meanings.js";
import { problemIn } from "../../experiments/view-language.js";
import { messageFromStore, say, type StoredMessage } from "../../errors.js";

// Reply templates of the builtin assistant. Every number, id and code comes from the facts passed in;
// text from user data (column, class and file names, dataset messages) goes through quote().

/** "AUC", "Sensibilidad": a metric's name as the catalog writes it, or its code when the catalog has none. */
export const metricLabel = (name: string, lang: Lang = "en") =>
  hasReply(lang, `words.metricLabel.${name}`) ? reply(lang, `words.metricLabel.${name}`) : name;
export const num = (v: number | null | undefined) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(3) : "n/a");
export const interval = (m: MetricValue, lang: Lang = "en") =>
  m.ci_low !== null && m.ci_high !== null
    ? reply(lang, "templates.95CI", { ciLow: num(m.ci_low), ciHigh: num(m.ci_high) })
    : reply(lang, "templates.noInterval");
export const metricLine = (name: string, m: MetricValue, lang: Lang = "en") =>
  `${metricLabel(name, lang)} ${num(m.value)}${interval(m, lang)}`;

/** Failure reasons and dataset messages quote user data (column names, file names): shown only inside a code span. */
export const REASON_MAX = 300;

/** Why an experiment failed, in the reader's language from its catalog words; the stored English for older rows. */
export function failureReasonIn(f: { failure_reason: string | null; failure_text?: StoredMessage | null }, lang: Lang): string | null {
  const text = messageFromStore(f.failure_text);
  return text ? say(text, lang) : f.failure_reason;
}

export const quotedReason = (f: { failure_reason: string | null; failure_text?: StoredMessage | null }, lang: Lang = "en") => {
  const reason = failureReasonIn(f, lang);
  return reason ? quote(reason, REASON_MAX) : reply(lang, "templates.noReasonWasRecorded");
};
const reasonOf = (f: ExperimentFacts, lang: Lang) => quotedReason(f, lang);

/** Where the experiment's page is in the dashboard: the one link a reply about it ends with. */
export const pageLink = (id: number, lang: Lang = "en") => reply(lang, "templates.detailsExperiments", { id });

function datasetLine(f: ExperimentFacts, lang: Lang): string | undefined {
  const d = f.dataset;
  const parts: string[] = [];
  if (d.rows !== null) parts.push(reply(lang, "templates.rows", { dRows: d.rows }));
  if (d.patients !== null) parts.push(reply(lang, "templates.patients", { dPatients: d.patients }));
  if (d.images !== null) parts.push(reply(lang, "templates.images", { dImages: d.images }));
  if (d.boxes !== null) parts.push(reply(lang, "templates.boxes", { dBoxes: d.boxes }));
  if (d.split)
    parts.push(
      reply(lang, "templates.splitByPatientTrainValidation", {
        splitTrain: d.split.train,
        splitVal: d.split.val,
        splitTest: d.split.test,
      }) + (d.split.from_column ? ` (${reply(lang, "templates.fromColumn")} ${quote(d.split.from_column, 40)})` : ""),
    );
  return parts.length ? `Dataset ${d.zip_gcloud ? quote(d.zip_gcloud, 120) : ""}: ${parts.join("; ")}.` : undefined;
}

/** The metric a model is judged by first: R² for regression, mAP for detection, else the one it optimised. */
export function mainMetric(f: ExperimentFacts): string | undefined {
  const main =
    f.model_type === "regression"
      ? "r2"
      : f.task === "detection"
        ? "map50"
        : f.optimization_metric
          ? ({ AUC: "auc", "F-macro": "f_macro", Precision: "precision", Recall: "recall" } as Record<string, string>)[
              f.optimization_metric
            ]
          : undefined;
  return main && f.metrics[main] ? main : f.metrics.auc ? "auc" : Object.keys(f.metrics)[0];
}

/** "read 0.871 as what it reliably reaches": the end of the interval a cautious reader should hold on to. */
export function reliableEnd(name: string, m: MetricValue, lang: Lang): string {
  return LOWER_IS_BETTER.has(name)
    ? reply(lang, "templates.readAsTheErrorIt", { ciHigh: num(m.ci_high) })
    : reply(lang, "templates.readAsWhatItReliably", { ciLow: num(m.ci_low) });
}

export const testPatients = (f: ExperimentFacts, lang: Lang) =>
  f.dataset.split?.test
    ? reply(lang, "templates.onHeldOutTestPatients", { splitTest: f.dataset.split.test })
    : reply(lang, "templates.onTheHeldOutTest");

function trustNote(f: ExperimentFacts, lang: Lang): string | undefined {
  // The warnings (src/experiments/warnings.ts) come first: a severe one means no interval should be read as reassurance.
  const severe = f.warnings.filter((w) => w.severity === "severe");
  if (severe.length) {
    const list = severe.map((w) => reply(lang, "templates.warningItem", { title: warningTitle(w, lang), code: w.code })).join("; ");
    return reply(lang, "templates.canYouTrustItNot", { list });
  }
  const name = mainMetric(f);
  const m = name ? f.metrics[name] : undefined;
  if (!name || !m || m.ci_low === null || m.ci_high === null) return undefined;
  const width = m.ci_high - m.ci_low;
  const verdict =
    width > 0.2
      ? reply(lang, "templates.theIntervalIsWideSo")
      : width > 0.1
        ? reply(lang, "templates.theIntervalIsModeratelyWide")
        : reply(lang, "templates.theIntervalIsNarrow");
  return reply(lang, "templates.canYouTrustItWas", {
    metricLabel: metricLabel(name, lang),
    testPatients: testPatients(f, lang),
    ciLow: num(m.ci_low),
    ciHigh: num(m.ci_high),
    reliableEnd: reliableEnd(name, m, lang),
    verdict: verdict ? ` ${verdict}` : "",
  });
}

/** The direct answer first when the question named a metric or the thresholds; the full report follows. */
export function leadLine(
  f: ExperimentFacts,
  ask: { metric?: string; thresholds?: boolean; perClass?: boolean; className?: string },
  lang: Lang = "en",
): string | undefined {
  const exp = reply(lang, "templates.experiment", { experimentId: f.experiment_id });
  if (ask.perClass || ask.className) {
    const names = ask.metric ? [ask.metric] : Object.keys(f.per_class);
    const lines = names
      .filter((n) => f.per_class[n])
      .map((n) => {
        const entries = Object.entries(f.per_class[n]).filter(([c]) => !ask.className || c === ask.className);
        return `- ${metricLabel(n, lang)}: ${entries.map(([c, m]) => `${quote(c, 40)} ${num(m.value)}${interval(m, lang)}`).join("; ")}`;
      });
    if (lines.length)
      return [
        reply(lang, "templates.perClass", { exp }) +
          (ask.className ? ` (${quote(ask.className, 40)})` : "") +
          reply(lang, "templates.onTheHeldOutTest2"),
        ...lines,
      ].join("\n");
    if (!ask.metric) return reply(lang, "templates.hasNoPerClassMetrics", { exp });
  }
  if (ask.metric) {
    const m = f.metrics[ask.metric];
    const tests = f.dataset.split?.test ? testPatients(f, lang) : "";
    if (m) return reply(lang, "templates.s", { exp, metricLine: metricLine(ask.metric, m, lang), tests });
    const has = Object.keys(f.metrics).length
      ? ` (${reply(lang, "templates.itHas")} ${Object.keys(f.metrics)
          .map((n) => metricLabel(n, lang))
          .join(", ")})`
      : "";
    return reply(lang, "templates.hasNoTestMetric", { exp, metricLabel: metricLabel(ask.metric, lang), has });
  }
  if (ask.thresholds)
    return f.thresholds
      ? reply(lang, "templates.decisionThresholds", {
          experimentId: f.experiment_id,
          thresholds: f.thresholds.map(num).join(", "),
          rule: f.threshold_rule ? reply(lang, "templates.chosenBy", { rule: f.threshold_rule }) : "",
        })
      : reply(lang, f.model ? "templates.noThresholdsByProblemType" : "templates.noThresholdsNoModel", { exp });
  return undefined;
}

/** The experiment in a few lines: state, test metrics with intervals, dataset, what limits trust, one link. */
export function experimentReport(f: ExperimentFacts, lang: Lang = "en"): string {
  const kind = reply(lang, `words.experimentKind.${f.task === "detection" ? "detection" : f.model_type}`, {
    task: reply(lang, `words.kind.${f.task}`),
  });
  // Regression requests still carry optimization_metric (the seed's contract requires it) but nothing uses it.
  const optimising =
    f.optimization_metric && f.model_type !== "regression"
      ? reply(lang, "templates.optimising", { optimizationMetric: f.optimization_metric })
      : "";
  const name = f.name ? ` ${quote(f.name, 60)}` : "";
  const lines = [
    // The default study type is worded by the catalog (Spanish leaves it out: "estudio Builder" reads as noise).
    reply(lang, f.study_type === "Builder" ? "templates.experimentStateBuilder" : "templates.experimentState", {
      id: f.experiment_id,
      name,
      kind,
      studyType: f.study_type,
      optimising,
      status: f.status,
    }),
  ];
  if (f.status === "failed") lines.push(reply(lang, "templates.itFailed", { reasonOf: reasonOf(f, lang) }));
  if (f.status === "invalid_dataset") lines.push(refusedSummary(f, undefined, lang));
  const p = f.progress;
  if (!["ready", "failed", "invalid_dataset", "cancelled"].includes(f.status) && p) {
    const left = p.eta_s ? reply(lang, "templates.aboutSLeft", { round: Math.round(p.eta_s) }) : "";
    lines.push(reply(lang, "templates.progressStage", { round: Math.round((p.fraction ?? 0) * 100), stage: p.stage ?? f.status, left }));
  }
  const names = Object.keys(f.metrics);
  if (names.length)
    lines.push(`${reply(lang, "templates.testMetrics")}: ${names.map((n) => metricLine(n, f.metrics[n], lang)).join("; ")}.`);
  if (f.classes && f.model_type !== "regression")
    lines.push(
      `${reply(lang, "templates.classes")}: ${Object.entries(f.classes)
        .map(([i, n]) => `${i} = ${quote(n, 40)}`)
        .join(", ")}.`,
    );
  const ds = datasetLine(f, lang);
  if (ds) lines.push(ds);
  if (f.status === "ready") {
    const t = trustNote(f, lang);
    if (t) lines.push(t);
    const others = f.warnings.filter((w) => w.severity !== "severe");
    if (others.length)
      lines.push(
        reply(lang, "templates.warnings", {
          list: others.map((w) => reply(lang, "templates.warningItem", { title: warningTitle(w, lang), code: w.code })).join("; "),
        }),
      );
    const sub = subgroupLine(f, lang);
    if (sub) lines.push(sub);
  }
  if (f.model && f.status !== "ready") lines.push(reply(lang, "templates.modelVersionIsPublished", { modelVersion: f.model.version }));
  lines.push(pageLink(f.experiment_id, lang));
  return lines.join("\n");
}

/** The subgroups the model does clearly worse for, or undefined when none was flagged. */
export function subgroupLine(f: ExperimentFacts, lang: Lang = "en"): string | undefined {
  const worse = f.worse_subgroups ?? [];
  if (!worse.length) return undefined;
  const each = worse
    .slice(0, 3)
    .map(
      (g) =>
        `${quote(g.column, 40)} ${quote(g.label, 40)} (AUC ${num(g.auc?.value)}, ${reply(lang, "templates.95CI2")} ${num(g.auc?.ci_low)}–${num(g.auc?.ci_high)}, ${reply(lang, "templates.against")} ${num(g.rest_auc)} ${reply(lang, "templates.forTheOtherTestPatients")})`,
    )
    .join("; ");
  const more = worse.length > 3 ? reply(lang, "templates.andMore", { more: worse.length - 3 }) : "";
  return reply(lang, "templates.subgroupsTheModelDoesClearly", { each, more });
}

export function refusedSummary(f: ExperimentFacts, glossary?: Glossary, lang: Lang = "en"): string {
  const errs = f.problems.errors;
  const count = new Set(errs.map((e) => e.code)).size;
  const total = errs.length + f.problems.errors_omitted;
  const why = failureReasonIn(f, lang);
  const reason = why ? ` (${quote(why, REASON_MAX)})` : "";
  const lines = [
    reply(lang, "templates.datasetRefused", {
      errors: reply(lang, "templates.errors", { count: total }),
      kinds: reply(lang, "templates.kinds", { count }),
      reason,
    }),
  ];
  for (const e of errs.slice(0, 8)) {
    const where = [
      e.row ? reply(lang, "templates.row", { eRow: e.row }) : "",
      e.column ? `${reply(lang, "templates.column")} ${quote(e.column, 60)}` : "",
      e.path ? `${reply(lang, "templates.path")} ${quote(e.path, 80)}` : "",
    ]
      .filter(Boolean)
      .join(", ");
    const meaning = codeMeaning(e.code, glossary, lang);
    lines.push(
      `- ${quote(e.code, 60)}${where ? ` (${where})` : ""}: ${quote(problemIn(e, lang).message, 240)}${meaning ? ` — ${meaning}` : ""}`,
    );
  }
  if (f.problems.errors_omitted) lines.push(reply(lang, "templates.andMore2", { errorsOmitted: f.problems.errors_omitted }));
  lines.push(reply(lang, "templates.fixTheseInTheCSV"));
  return lines.join("\n");
}

export function refusedReport(f: ExperimentFacts, glossary: Glossary, lang: Lang = "en"): string {
  const exp = reply(lang, "templates.experiment", { experimentId: f.experiment_id });
  if (f.status === "invalid_dataset")
    return `${exp} ${reply(lang, "templates.is")} **invalid_dataset**. ${refusedSummary(f, glossary, lang)}`;
  if (f.status === "failed") {
    const rows = f.dataset.rows !== null ? ` (${f.dataset.rows} ${reply(lang, "templates.rows2")})` : "";
    const where = f.history.at(-2)?.status ?? reply(lang, "templates.theJob");
    return reply(lang, "templates.failedItsDatasetPassedThe", { exp, reasonOf: reasonOf(f, lang), rows, where });
  }
  return `${reply(lang, "templates.wasNotRefusedItIs", { exp })} **${f.status}**.\n${experimentReport(f, lang)}`;
}

export function modelHowto(m: PublishedModel, lang: Lang = "en"): string {
  const lines = [
    reply(lang, "templates.experimentSModelVersionAnswers", {
      experimentId: m.experiment_id,
      mVersion: m.version,
      mKind: m.kind,
      mProblem: m.problem,
    }),
  ];
  const inputs = m.inputs;
  const cols = inputs.columns;
  if (cols) {
    lines.push(
      reply(lang, "templates.sendMessageAnArrayOf", { colsLength: cols.length, map: cols.map((c) => quote(c.name, 200)).join(", ") }),
    );
    for (const c of cols) {
      if (c.categories === undefined) continue;
      lines.push(
        reply(lang, "templates.isCategoricalValuesSendThe", {
          cName: quote(c.name, 60),
          cCategories: c.categories,
          lastCode: c.categories - 1,
        }),
      );
    }
  } else if (inputs.image) {
    const image = inputs.image;
    const ch = reply(lang, "templates.channels", { count: image.channels });
    lines.push(
      reply(lang, "templates.sendImage", {
        message: reply(lang, "templates.imageUri"),
        width: image.width,
        height: image.height,
        channels: ch,
      }),
    );
  }
  lines.push(
    `${reply(lang, "templates.classes")}: ${Object.entries(m.classes)
      .map(([i, n]) => `${i} = ${quote(n, 40)}`)
      .join(", ")}.${m.thresholds ? ` ${reply(lang, "templates.thresholds")}: ${m.thresholds.map(num).join(", ")}.` : ""}`,
  );
  lines.push(reply(lang, "templates.readyToRunReplaceKEY"), "```sh", m.predict_example, "```");
  lines.push(reply(lang, "templates.theAnswer201Carries", { map: m.answer_fields.map((f) => `\`${f}\``).join(", ") }));
  return lines.join("\n");
}

/** What the assistant can answer, with example questions in the reader's language. */
export const capabilities = (lang: Lang = "en") => reply(lang, "templates.capabilities");

/** What the chat says when its matcher is not sure what a question asks (intents.ts MIN_CONFIDENCE). */
export const notUnderstood = (lang: Lang) => reply(lang, "templates.iDidNotUnderstandThat");
