import type { BackendReply } from "../backend.js";
import type { Task } from "../facts.js";
import { say } from "../language.js";
import { asMetricName, asStatus, type DocPassage } from "../tools.js";
import { quote } from "../safety.js";
import type { Intent } from "./intents.js";
import { metricsNamedIn } from "./slots.js";
import type { ReplyContext } from "./context.js";
import { METRIC_MEANINGS_ES, codeMeaning } from "./spanish.js";
import {
  capabilities,
  experimentReport,
  leadLine,
  metricLabel,
  metricLine,
  modelHowto,
  pageLink,
  quotedReason,
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

export const notFound = (ctx: ReplyContext, id: number) =>
  say(
    ctx.lang,
    `You have no experiment ${id}. Ask "list my experiments" to see yours.`,
    `No tiene ningún experimento ${id}. Pida "lista mis experimentos" para ver los suyos.`,
  );

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
      reply: say(
        lang,
        "None of your experiments failed or had its dataset refused.",
        "Ninguno de sus experimentos falló ni tuvo el dataset rechazado.",
      ),
      references: [],
    };
  const lines = [say(lang, `${rows.length} of your experiments did not finish:`, `${rows.length} de sus experimentos no terminaron:`)];
  for (const e of rows.slice(0, 15))
    lines.push(`- ${say(lang, "experiment", "experimento")} ${e.experiment_id}: **${e.status}** — ${quotedReason(e.failure_reason, lang)}`);
  const refs = failed.references.filter((r) => rows.some((e) => String(e.experiment_id) === r.id));
  // The newest refused dataset is most likely the one asked about: its problems in full.
  const invalid = rows.find((e) => e.status === "invalid_dataset");
  if (invalid) {
    const detail = await tools.getExperiment({ experiment_id: invalid.experiment_id });
    if (detail.result.found) lines.push("", refusedReport(detail.result, ctx.glossary, lang));
    refs.push(...detail.references);
  }
  if (rows.length > 1)
    lines.push(
      "",
      say(
        lang,
        'Ask "why was experiment N refused?" for the problems of another one.',
        'Pregunte "¿por qué rechazaron el experimento N?" para los problemas de otro.',
      ),
    );
  return { reply: lines.join("\n"), references: refs };
}

export async function predictReply(ctx: ReplyContext, experimentId: number | undefined, task: Task | undefined): Promise<BackendReply> {
  const { tools, lang } = ctx;
  if (experimentId) {
    const { result, references } = await tools.modelInputs({ experiment_id: experimentId });
    if (result.found) return { reply: modelHowto(result, lang), references };
    return {
      reply: result.experiment_status
        ? say(
            lang,
            `Experiment ${experimentId} has no published model yet (it is **${result.experiment_status}**); /predict works once it is ready.`,
            `El experimento ${experimentId} aún no tiene modelo publicado (está **${result.experiment_status}**); /predict funciona cuando esté listo.`,
          )
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
      reply: `${say(lang, `You have no ready ${task ? `${task} ` : ""}model yet. How /predict works in general:`, `Aún no tiene ningún modelo ${task ? `${task} ` : ""}listo. Cómo funciona /predict en general:`)}\n${docs.reply}`,
      references: docs.references,
    };
  }
  const { result, references } = await tools.modelInputs({ experiment_id: candidates[0].experiment_id });
  if (!result.found) return { reply: notFound(ctx, candidates[0].experiment_id), references };
  const others = candidates.slice(1).map((e) => e.experiment_id);
  const note = others.length
    ? `\n${say(lang, `Your other ready ${task ? `${task} ` : ""}models: experiments ${others.join(", ")} (ask about one by number).`, `Sus otros modelos listos: experimentos ${others.join(", ")} (pregunte por uno con su número).`)}`
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
      reply: say(
        lang,
        `None of your ready experiments${intent.task ? " of that kind" : ""} has a ${metricLabel(metric)} test metric.${intent.metric ? "" : " Name a metric (AUC, F-macro, Precision, Recall, mAP, MAE…) to compare on it."}`,
        `Ninguno de sus experimentos listos${intent.task ? " de ese tipo" : ""} tiene ${metricLabel(metric, lang)} de test.${intent.metric ? "" : " Nombre una métrica (AUC, F-macro, sensibilidad, mAP, MAE…) para comparar."}`,
      ),
      references: [],
    };
  const [best] = ranking;
  const lines = [
    say(
      lang,
      `On ${metricLabel(metric)}${intent.metric ? "" : " (no metric named, so AUC)"}, your best model is experiment ${best.experiment_id}: ${metricLine(metric, best)}.`,
      `En ${metricLabel(metric, lang)}${intent.metric ? "" : " (no nombró métrica, así que AUC)"}, su mejor modelo es el experimento ${best.experiment_id}: ${metricLine(metric, best, lang)}.`,
    ),
  ];
  if (ranking.length > 1) {
    lines.push(say(lang, "Ranking of your ready experiments:", "Ranking de sus experimentos listos:"));
    for (const r of ranking.slice(0, 10))
      lines.push(
        `- ${say(lang, "experiment", "experimento")} ${r.experiment_id}${r.name ? ` ${quote(r.name, 60)}` : ""} (${r.task}): ${metricLine(metric, r, lang)}`,
      );
    const second = ranking[1];
    if (best.ci_low !== null && second.ci_high !== null && best.ci_low <= second.ci_high) {
      lines.push(
        say(
          lang,
          `The intervals of experiments ${best.experiment_id} and ${second.experiment_id} overlap, so the test data do not show a clear difference between them.`,
          `Los intervalos de los experimentos ${best.experiment_id} y ${second.experiment_id} se solapan: los datos de test no muestran una diferencia clara entre ellos.`,
        ),
      );
    }
  }
  if (result.not_ranked.length)
    lines.push(
      say(
        lang,
        `Not ranked (not yours, not ready, or without ${metricLabel(metric)}): experiment${result.not_ranked.length > 1 ? "s" : ""} ${result.not_ranked.join(", ")}.`,
        `Sin ranking (no son suyos, no están listos o no tienen ${metricLabel(metric, lang)}): ${result.not_ranked.join(", ")}.`,
      ),
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
      reply: say(lang, `You have no ${what}experiments yet.`, `Aún no tiene experimentos ${what}.`.replace(" .", ".")),
      references: [],
    };
  const lines = [
    say(
      lang,
      `You have ${list.length} ${what}experiment${list.length === 1 ? "" : "s"}:`,
      `Tiene ${list.length} experimento${list.length === 1 ? "" : "s"} ${what}(los más recientes primero):`,
    ),
  ];
  const kind = { data: "tabla", vision: "imagen", detection: "detección" } as const;
  for (const e of list.slice(0, 25)) {
    const detail = e.metric
      ? `, ${metricLine(e.metric.name, e.metric, lang)}`
      : e.failure_reason
        ? ` — ${quote(e.failure_reason, 120)}`
        : "";
    const task = lang === "es" ? kind[e.task] : e.task;
    lines.push(
      `- ${say(lang, "experiment", "experimento")} ${e.experiment_id}${e.name ? ` ${quote(e.name, 60)}` : ""}: ${task}, **${e.status}**${detail}`,
    );
  }
  if (list.length > 25) lines.push(say(lang, `…and ${list.length - 25} more.`, `…y ${list.length - 25} más.`));
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
    const request = r.request_name ? say(lang, `, \`${r.request_name}\` in requests`, `, \`${r.request_name}\` en las peticiones`) : "";
    return {
      reply: say(
        lang,
        `${metricLabel(r.name)} (\`${r.name}\`${request}): ${r.meaning}. ${r.lower_is_better ? "Lower is better." : "Higher is better."} Builder reports it on held-out test patients with a 95% confidence interval (\`ci_low\`, \`ci_high\`) from a bootstrap over patients.`,
        `${metricLabel(r.name, lang)} (\`${r.name}\`${request}): ${METRIC_MEANINGS_ES[r.name] ?? r.meaning}. ${r.lower_is_better ? "Cuanto más bajo, mejor." : "Cuanto más alto, mejor."} Builder la da con pacientes de test reservados y un intervalo de confianza del 95% (\`ci_low\`, \`ci_high\`) por bootstrap sobre pacientes.`,
      ),
      references,
    };
  }
  if (r.kind === "unknown") return docsReply(ctx, term);
  const meaning = codeMeaning(r.code, ctx.glossary, lang) ?? r.meaning;
  const what =
    r.kind === "dataset_error"
      ? say(lang, "a dataset error (the dataset is refused until it is fixed)", "un error del dataset (se rechaza hasta que se corrija)")
      : r.kind === "dataset_warning"
        ? say(lang, "a dataset warning (the dataset stays valid)", "un aviso del dataset (el dataset sigue siendo válido)")
        : say(lang, "an API error", "un error de la API") + (r.http_status ? ` (HTTP ${r.http_status})` : "");
  return { reply: say(lang, `\`${r.code}\` is ${what}: ${meaning}.`, `\`${r.code}\` es ${what}: ${meaning}.`), references };
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
      reply: `${say(lang, "I found nothing on that in Builder's documentation.", "No encontré nada sobre eso en la documentación de Builder.")}\n\n${capabilities(lang)}`,
      references: [],
    };
  const { text, passage } = found;
  const cut = text.length > 900 && !text.includes("```") ? `${text.slice(0, 900)}…` : text;
  // The search cuts long sections, possibly inside a code block: close it rather than leave the reply's markdown open.
  const short = (cut.match(/```/g) ?? []).length % 2 ? `${cut}\n\`\`\`` : cut;
  const lines = [
    say(
      lang,
      `From Builder's documentation, **${passage.section}** (${passage.source}):`,
      `De la documentación de Builder (en inglés), **${passage.section}** (${passage.source}):`,
    ),
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
