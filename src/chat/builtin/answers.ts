import type { BackendReply } from "../backend.js";
import type { Task } from "../facts.js";
import { reply, wordFor } from "../language.js";
import { asMetricName, asStatus, type DocPassage } from "../tools.js";
import { quote } from "../safety.js";
import type { Intent } from "./intents.js";
import { metricsNamedIn } from "./slots.js";
import type { ReplyContext } from "./context.js";
import { codeMeaning, metricMeaning } from "./meanings.js";
import {
  capabilities,
  experimentReport,
  leadLine,
  metricLabel,
  metricLine,
  modelHowto,
  pageLink,
  quotedReason,
  failureReasonIn,
  refusedReport,
} from "./templates.js";

// One function per intent's reply, over the typed tool results. Facts come only from the tools; user text only
// through quote(); the language is the message's (ctx.lang).

const COMMON = new Set([
  "the",
  "and",
  "for",
  "model",
  "models",
  "data",
  "zip",
  "csv",
  "images",
  "image",
  "predict",
  "call",
  "how",
  "use",
  "exp",
  "label",
]);
/** Lower-case words of 3+ letters; "X-ray" and "xray" meet as "xray". */
export const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/-/g, "")
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !COMMON.has(w) && !/^\d+$/.test(w));

export const notFound = (ctx: ReplyContext, id: number) => reply(ctx.lang, "answers.youHaveNoExperimentAsk", { id });

export async function statusReply(ctx: ReplyContext, intent: Extract<Intent, { kind: "experiment_status" }>): Promise<BackendReply> {
  const { result, references } = await ctx.tools.getExperiment({ experiment_id: intent.experimentId });
  if (!result.found) return { reply: notFound(ctx, intent.experimentId), references };
  // A class named in the question ("how does it do on melanoma?") asks for that class's metrics.
  const words = new Set(wordsOf(ctx.text));
  const className = Object.values(result.classes ?? {}).find((c) => words.has(c.toLowerCase()));
  const lead = leadLine(result, { ...intent, className }, ctx.lang);
  // The fact asked for, and the page for the rest; the whole report only when no one fact was asked for.
  if (lead) return { reply: `${lead}\n${pageLink(result.experiment_id, ctx.lang)}`, references };
  return { reply: experimentReport(result, ctx.lang), references };
}

export async function whyRefusedReply(ctx: ReplyContext, experimentId: number | undefined): Promise<BackendReply> {
  const { tools, lang } = ctx;
  if (experimentId) {
    const { result, references } = await tools.getExperiment({ experiment_id: experimentId });
    return { reply: result.found ? refusedReport(result, ctx.glossary, lang) : notFound(ctx, experimentId), references };
  }
  const failed = await tools.listExperiments({});
  const rows = failed.result.experiments.filter((e) => e.status === "failed" || e.status === "invalid_dataset");
  if (!rows.length)
    return {
      reply: reply(lang, "answers.noneOfYourExperimentsFailed"),
      references: [],
    };
  const lines = [reply(lang, "answers.ofYourExperimentsDidNot", { rowsLength: rows.length })];
  for (const e of rows.slice(0, 15))
    lines.push(`- ${reply(lang, "answers.experiment")} ${e.experiment_id}: **${e.status}** — ${quotedReason(e, lang)}`);
  const refs = failed.references.filter((r) => rows.some((e) => String(e.experiment_id) === r.id));
  // The newest refused dataset is most likely the one asked about: its problems in full.
  const invalid = rows.find((e) => e.status === "invalid_dataset");
  if (invalid) {
    const detail = await tools.getExperiment({ experiment_id: invalid.experiment_id });
    if (detail.result.found) lines.push("", refusedReport(detail.result, ctx.glossary, lang));
    refs.push(...detail.references);
  }
  if (rows.length > 1) lines.push("", reply(lang, "answers.askWhyWasExperimentN"));
  return { reply: lines.join("\n"), references: refs };
}

export async function predictReply(ctx: ReplyContext, experimentId: number | undefined, task: Task | undefined): Promise<BackendReply> {
  const { tools, lang } = ctx;
  if (experimentId) {
    const { result, references } = await tools.modelInputs({ experiment_id: experimentId });
    if (result.found) return { reply: modelHowto(result, lang), references };
    return {
      reply: result.experiment_status
        ? reply(lang, "answers.experimentHasNoPublishedModel", { experimentId, experimentStatus: result.experiment_status })
        : notFound(ctx, experimentId),
      references,
    };
  }
  const ready = (await tools.listExperiments({ status: "ready" })).result.experiments;
  // "the chest X-ray model": prefer the model whose dataset path or label columns share words with the question.
  const words = new Set(wordsOf(ctx.text));
  const overlap = (e: (typeof ready)[number]) => wordsOf(`${e.dataset ?? ""} ${e.label_cols.join(" ")}`).filter((w) => words.has(w)).length;
  const candidates = ready
    .filter((e) => !task || e.task === task)
    .map((e) => ({ e, score: overlap(e) }))
    .sort((a, b) => b.score - a.score)
    .map((x) => x.e);
  if (!candidates.length) {
    const docs = await docsReply(ctx, "prediction predict message data_cols");
    return {
      reply: `${reply(lang, "answers.youHaveNoReadyModel", { task: task ? `${task} ` : "" })}\n${docs.reply}`,
      references: docs.references,
    };
  }
  const { result, references } = await tools.modelInputs({ experiment_id: candidates[0].experiment_id });
  if (!result.found) return { reply: notFound(ctx, candidates[0].experiment_id), references };
  const others = candidates.slice(1).map((e) => e.experiment_id);
  const note = others.length
    ? `\n${reply(lang, task ? "answers.otherReadyModelsOfTask" : "answers.otherReadyModels", { task: task ?? "", experiments: others.join(", ") })}`
    : "";
  return { reply: `${modelHowto(result, lang)}${note}`, references };
}

export async function bestModelReply(ctx: ReplyContext, intent: Extract<Intent, { kind: "best_model" }>): Promise<BackendReply> {
  const { lang } = ctx;
  const metric = intent.metric ?? "auc";
  const known = asMetricName(metric);
  const { result, references } = await ctx.tools.compareExperiments({
    metric: known,
    ...(intent.experimentIds ? { experiment_ids: intent.experimentIds } : {}),
  });
  const ranking = intent.task ? result.ranking.filter((r) => r.task === intent.task) : result.ranking;
  if (!ranking.length)
    return {
      reply: [
        reply(lang, intent.task ? "answers.noReadyExperimentOfKindHasMetric" : "answers.noReadyExperimentHasMetric", {
          metric: metricLabel(metric, lang),
        }),
        intent.metric ? "" : ` ${reply(lang, "answers.nameAMetric")}`,
      ].join(""),
      references: [],
    };
  const [best] = ranking;
  const lines = [
    reply(lang, intent.metric ? "answers.bestModelOn" : "answers.bestModelOnAuc", {
      metric: metricLabel(metric, lang),
      id: best.experiment_id,
      line: metricLine(metric, best, lang),
    }),
  ];
  if (ranking.length > 1) {
    lines.push(reply(lang, "answers.rankingOfYourReadyExperiments"));
    for (const r of ranking.slice(0, 10))
      lines.push(
        `- ${reply(lang, "answers.experiment")} ${r.experiment_id}${r.name ? ` ${quote(r.name, 60)}` : ""} (${r.task}): ${metricLine(metric, r, lang)}`,
      );
    const second = ranking[1];
    if (best.ci_low !== null && second.ci_high !== null && best.ci_low <= second.ci_high) {
      lines.push(
        reply(lang, "answers.theIntervalsOfExperimentsAnd", { experimentId: best.experiment_id, experimentId2: second.experiment_id }),
      );
    }
  }
  if (result.not_ranked.length)
    lines.push(
      reply(lang, "answers.notRanked", {
        metric: metricLabel(metric, lang),
        count: result.not_ranked.length,
        experiments: result.not_ranked.join(", "),
      }),
    );
  return { reply: lines.join("\n"), references: references.filter((r) => ranking.some((x) => String(x.experiment_id) === r.id)) };
}

export async function listReply(ctx: ReplyContext, intent: Extract<Intent, { kind: "list_experiments" }>): Promise<BackendReply> {
  const { lang } = ctx;
  const status = asStatus(intent.status);
  // "Which experiments failed?" also means those whose dataset was refused: neither produced a model.
  const failedOrRefused = status === "failed";
  const { result, references } = await ctx.tools.listExperiments({
    ...(status && !failedOrRefused ? { status } : {}),
    ...(intent.task ? { task: intent.task } : {}),
  });
  const list = failedOrRefused
    ? result.experiments.filter((e) => e.status === "failed" || e.status === "invalid_dataset")
    : result.experiments;
  const what = `${intent.status ? `${intent.status} ` : ""}${intent.task ? `${intent.task} ` : ""}`;
  if (!list.length)
    return {
      reply: reply(lang, "answers.noExperimentsYet", { what }),
      references: [],
    };
  const lines = [reply(lang, "answers.youHaveExperiment", { count: list.length, what })];
  for (const e of list.slice(0, 25)) {
    const why = failureReasonIn(e, lang);
    const detail = e.metric ? `, ${metricLine(e.metric.name, e.metric, lang)}` : why ? ` — ${quote(why, 120)}` : "";
    lines.push(
      `- ${reply(lang, "answers.experiment")} ${e.experiment_id}${e.name ? ` ${quote(e.name, 60)}` : ""}: ${wordFor(lang, "words.task", e.task)}, **${e.status}**${detail}`,
    );
  }
  if (list.length > 25) lines.push(reply(lang, "answers.andMore", { more: list.length - 25 }));
  return { reply: lines.join("\n"), references };
}

/** "the difference between precision and recall": each metric named, the first one found first. */
export async function explainMetricReply(ctx: ReplyContext, metric: string): Promise<BackendReply> {
  const names = [metric, ...metricsNamedIn(ctx.text, ctx.glossary).filter((n) => n !== metric)].slice(0, 4);
  const parts = await Promise.all(names.map((term) => explainReply(ctx, term)));
  return { reply: parts.map((p) => p.reply).join("\n\n"), references: parts.flatMap((p) => p.references) };
}

export async function explainReply(ctx: ReplyContext, term: string): Promise<BackendReply> {
  const { lang } = ctx;
  const { result: r, references } = await ctx.tools.explain({ term });
  if (r.kind === "metric") {
    const request = r.request_name ? reply(lang, "answers.inRequests", { requestName: r.request_name }) : "";
    return {
      reply: reply(lang, r.lower_is_better ? "answers.metricLowerIsBetter" : "answers.metricHigherIsBetter", {
        label: metricLabel(r.name, lang),
        name: r.name,
        request,
        meaning: metricMeaning(r.name, r.meaning, lang),
      }),
      references,
    };
  }
  if (r.kind === "unknown") return docsReply(ctx, term);
  const meaning = codeMeaning(r.code, ctx.glossary, lang) ?? r.meaning;
  const what =
    r.kind === "dataset_error"
      ? reply(lang, "answers.aDatasetErrorTheDataset")
      : r.kind === "dataset_warning"
        ? reply(lang, "answers.aDatasetWarningTheDataset")
        : reply(lang, "answers.anAPIError") + (r.http_status ? ` (HTTP ${r.http_status})` : "");
  return { reply: reply(lang, "answers.is", { rCode: r.code, what, meaning }), references };
}

// Words that say nothing about what a paragraph is about.
const STOP = new Set([
  "how",
  "what",
  "the",
  "and",
  "for",
  "does",
  "can",
  "you",
  "your",
  "with",
  "this",
  "that",
  "are",
  "is",
  "do",
  "my",
  "of",
  "to",
  "in",
  "a",
  "an",
  "it",
]);

/** Documentation prose as a blockquote (it is the docs' English, not the reply's words); code blocks as they are. */
function quoteProse(text: string): string {
  let fenced = false;
  return text
    .split("\n")
    .map((l) => {
      const fence = /^\s*```/.test(l);
      if (fence) fenced = !fenced;
      return fence || fenced ? l : `> ${l}`;
    })
    .join("\n");
}

/** Paragraphs split at blank lines outside code fences; "for example:" and the code block after it stay together. */
function paragraphs(text: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (!fenced && !line.trim()) {
      if (current.length) out.push(current.join("\n"));
      current = [];
    } else current.push(line);
  }
  if (current.length) out.push(current.join("\n"));
  return out.reduce<string[]>((acc, p) => {
    if (acc.length && p.startsWith("```") && acc[acc.length - 1].trimEnd().endsWith(":")) acc[acc.length - 1] += `\n${p}`;
    else acc.push(p);
    return acc;
  }, []);
}

/** The paragraph of the closest sections that shares most of the question's words (by their first five letters). */
function bestParagraph(query: string, passages: DocPassage[]): { text: string; passage: DocPassage } | undefined {
  const stems = new Set(
    query
      .toLowerCase()
      .split(/[^a-z0-9_]+/)
      .filter((w) => w.length > 2 && !STOP.has(w))
      .map((w) => w.slice(0, 5)),
  );
  const howTo = /\bhow\b/i.test(query);
  let best: { text: string; passage: DocPassage; score: number } | undefined;
  for (const passage of passages) {
    // Tables (environment variables, codes) are reference material, not an answer: left out, the link leads to them.
    for (const para of paragraphs(passage.text)) {
      const text = para
        .split("\n")
        .filter((l) => !/^\s*\|/.test(l))
        .join("\n")
        .trim();
      if (text.length < 40) continue;
      const words = new Set(
        text
          .toLowerCase()
          .split(/[^a-z0-9_]+/)
          .map((w) => w.slice(0, 5)),
      );
      const heading = new Set(
        passage.section
          .toLowerCase()
          .split(/[^a-z0-9_]+/)
          .map((w) => w.slice(0, 5)),
      );
      // A "how do I" question is best answered by the commands, when the section has them.
      const score =
        [...stems].filter((s) => words.has(s)).length +
        0.5 * [...stems].filter((s) => heading.has(s)).length +
        (howTo && text.includes("```") ? 1.5 : 0);
      if (!best || score > best.score) best = { text, passage, score };
    }
  }
  return best;
}

/** The closest documentation paragraph, cut short and without tables, with its section; the docs are in English. */
export async function docsReply(ctx: ReplyContext, query: string): Promise<BackendReply> {
  const { lang } = ctx;
  const { result, references } = await ctx.tools.searchDocs({ query });
  const found = bestParagraph(query, result.passages);
  if (!found)
    return {
      reply: `${reply(lang, "answers.iFoundNothingOnThat")}\n\n${capabilities(lang)}`,
      references: [],
    };
  const { text, passage } = found;
  const cut = text.length > 900 && !text.includes("```") ? `${text.slice(0, 900)}…` : text;
  // The search cuts long sections, possibly inside a code block: close it rather than leave the reply's markdown open.
  const short = (cut.match(/```/g) ?? []).length % 2 ? `${cut}\n\`\`\`` : cut;
  const lines = [
    reply(lang, "answers.fromBuilderSDocumentation", { passageSection: passage.section, passageSource: passage.source }),
    quoteProse(short),
  ];
  return {
    reply: lines.join("\n"),
    references: references
      .filter((r) => r.id === passage.source)
      .concat(references)
      .slice(0, 2),
  };
}
