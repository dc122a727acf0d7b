import type { BackendReply, BackendRequest, ChatBackend } from "../backend.js";
import { uniqueReferences } from "../backend.js";
import type { Reference } from "../repository.js";
import type { ExperimentFacts } from "../facts.js";
import type { Glossary } from "../glossary.js";
import { quote } from "../safety.js";
import type { ChatTools } from "../tools.js";
import { experimentNumbers, metricIn, metricsNamedIn, recognise, type Intent } from "./intents.js";
import { resolveExperiment, type Candidate, type Resolution } from "../resolve.js";
import { askWhich, asksForHeatMap, heatMapLead, heatMapMismatch, inputKindMismatch, noneFits } from "./resolve-replies.js";
import { CAPABILITIES, experimentReport, leadLine, metricLabel, metricLine, modelHowto, quotedReason, refusedReport } from "./templates.js";

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
const wordsOf = (text: string) =>
  text
    .toLowerCase()
    .replace(/-/g, "")
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !COMMON.has(w) && !/^\d+$/.test(w));

/** The one experiment a message names, by number or unambiguously in words; undefined otherwise. */
function experimentNamedIn(message: string, all: Candidate[]): number | undefined {
  const numbered = experimentNumbers(message)[0];
  if (numbered) return numbered;
  const r = resolveExperiment(message, all);
  return r.kind === "one" ? r.experiment.experiment_id : r.kind === "number" ? r.experimentId : undefined;
}

/** The experiment the newest earlier user message named, searched newest first and no further than that one. */
function earlierExperiment(history: BackendRequest["history"], all: Candidate[]): number | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i].role !== "user") continue;
    const named = experimentNamedIn(history[i].content, all);
    if (named) return named;
  }
  return undefined;
}

type Facts = ExperimentFacts | { found: false; experiment_id: number };
type ModelResult = Awaited<ReturnType<ChatTools["modelInputs"]>>["result"];
type Listed = {
  name?: string | null;
  description?: string | null;
  dataset?: string;
  label_cols?: string[];
  experiment_id: number;
  status: string;
  task: string;
  failure_reason: string | null;
  metric?: { name: string; value: number; ci_low: number | null; ci_high: number | null };
};

/**
 * The embedded assistant: no LLM and no network. It recognises the common questions, answers them with the same
 * tools an LLM would call, fills templates with what they return and cites it; anything else gets the closest
 * documentation passages and a pointer to what it can answer.
 */
export class BuiltinBackend implements ChatBackend {
  readonly name = "builtin" as const;
  constructor(private readonly glossary: Glossary) {}

  async answer(req: BackendRequest): Promise<BackendReply> {
    const listed = await req.tools.listExperiments({});
    const all = (listed.result as { experiments: Listed[] }).experiments as Candidate[];
    // "and its metrics?" after a question about experiment 7, or about "my diabetes model", is about that one.
    const earlier = earlierExperiment(req.history, all);
    const intent = recognise(req.message, this.glossary, { experimentId: req.experimentId ?? earlier });
    const out = await this.answerNamed(intent, req, { all, references: listed.references });
    const reply = { reply: out.reply, references: uniqueReferences(out.references) };
    if (req.onToken) for (const piece of reply.reply.match(/\S+\s*|\s+/g) ?? []) req.onToken(piece);
    return reply;
  }

  /**
   * A model named in words ("my breast cancer model", "the last one") is resolved among the caller's experiments
   * first: one fit is answered as if numbered, a tie or no fit is said instead of guessing. Then, however the model
   * was named (words, number or the conversation), a question that needs another kind of model (a heat map of a
   * tabular one, an image sent to a tabular one) says so instead of answering about the wrong kind.
   * Comparisons and code explanations are about no single model.
   */
  private async answerNamed(
    intent: Intent,
    req: BackendRequest,
    listed: { all: Candidate[]; references: Reference[] },
  ): Promise<BackendReply> {
    if (intent.kind === "best_model" || intent.kind === "explain_code") return this.run(intent, req);
    const all = listed.all;
    const refsOf = (cs: Candidate[]) => listed.references.filter((r) => cs.some((c) => String(c.experiment_id) === r.id));
    const resolution: Resolution = experimentNumbers(req.message).length ? { kind: "none_named" } : resolveExperiment(req.message, all);
    let target: Intent = intent;
    switch (resolution.kind) {
      case "ambiguous":
        return { reply: askWhich(resolution.candidates), references: refsOf(resolution.candidates) };
      case "no_match":
        return { reply: noneFits(resolution.words, all), references: [] };
      case "number":
        target = this.about(intent, resolution.experimentId, req.message);
        break;
      case "one":
        target = this.about(intent, resolution.experiment.experiment_id, req.message);
        break;
    }
    const id = "experimentId" in target ? target.experimentId : undefined;
    const picked = id ? all.find((c) => c.experiment_id === id) : undefined;
    if (picked && asksForHeatMap(req.message)) {
      const mismatch = heatMapMismatch(picked);
      if (mismatch) return { reply: mismatch, references: refsOf([picked]) };
      const out = await this.run(target, req);
      return { reply: `${heatMapLead(picked)}\n\n${out.reply}`, references: out.references };
    }
    const implied = target.kind === "predict_howto" ? target.task : undefined;
    const mismatch = picked && implied ? inputKindMismatch(picked, implied) : undefined;
    if (mismatch) return { reply: mismatch, references: refsOf([picked!]) };
    return this.run(target, req);
  }

  /** The intent, pointed at the experiment the words resolved to; a question with no intent of its own asks for its report. */
  private about(intent: Intent, experimentId: number, message: string): Intent {
    switch (intent.kind) {
      case "predict_howto":
      case "why_refused":
      case "experiment_status":
        return { ...intent, experimentId };
      default: {
        const metric = metricIn(message, this.glossary);
        return { kind: "experiment_status", experimentId, ...(metric ? { metric } : {}) };
      }
    }
  }

  private async run(intent: Intent, req: BackendRequest): Promise<BackendReply> {
    const tools = req.tools;
    switch (intent.kind) {
      case "explain_metric": {
        // "the difference between precision and recall": explain each metric named, the first one found first.
        const names = [intent.metric, ...metricsNamedIn(req.message, this.glossary).filter((n) => n !== intent.metric)].slice(0, 4);
        const parts = await Promise.all(names.map((term) => this.explain(req, term)));
        return { reply: parts.map((p) => p.reply).join("\n\n"), references: parts.flatMap((p) => p.references) };
      }
      case "explain_code":
        return this.explain(req, intent.code);
      case "why_refused": {
        if (intent.experimentId) {
          const { result, references } = await tools.getExperiment({ experiment_id: intent.experimentId });
          return { reply: this.found(result) ? refusedReport(result, this.glossary) : this.notFound(intent.experimentId), references };
        }
        const failed = await tools.listExperiments({});
        const rows = (failed.result as { experiments: Listed[] }).experiments.filter(
          (e) => e.status === "failed" || e.status === "invalid_dataset",
        );
        if (!rows.length) return { reply: "None of your experiments failed or had its dataset refused.", references: [] };
        const lines = [`${rows.length} of your experiments did not finish:`];
        for (const e of rows.slice(0, 15))
          lines.push(`- experiment ${e.experiment_id}: **${e.status}** — ${quotedReason(e.failure_reason)}`);
        const refs = failed.references.filter((r) => rows.some((e) => String(e.experiment_id) === r.id));
        // The newest refused dataset is most likely the one asked about: its problems in full.
        const invalid = rows.find((e) => e.status === "invalid_dataset");
        if (invalid) {
          const detail = await tools.getExperiment({ experiment_id: invalid.experiment_id });
          if (this.found(detail.result)) lines.push("", refusedReport(detail.result, this.glossary));
          refs.push(...detail.references);
        }
        if (rows.length > 1) lines.push("", 'Ask "why was experiment N refused?" for the problems of another one.');
        return { reply: lines.join("\n"), references: refs };
      }
      case "predict_howto":
        return this.predict(req, intent.experimentId, intent.task);
      case "best_model": {
        const metric = intent.metric ?? "auc";
        const { result, references } = await tools.compareExperiments({
          metric: metric as never,
          ...(intent.experimentIds ? { experiment_ids: intent.experimentIds } : {}),
        });
        let ranking = (
          result as {
            ranking: Array<{
              experiment_id: number;
              name?: string | null;
              task: string;
              value: number;
              ci_low: number | null;
              ci_high: number | null;
            }>;
          }
        ).ranking;
        if (intent.task) ranking = ranking.filter((r) => r.task === intent.task);
        if (!ranking.length)
          return {
            reply: `None of your ready experiments${intent.task ? ` of that kind` : ""} has a ${metricLabel(metric)} test metric.${intent.metric ? "" : " Name a metric (AUC, F-macro, Precision, Recall, mAP, MAE…) to compare on it."}`,
            references: [],
          };
        const [best] = ranking;
        const lines = [
          `On ${metricLabel(metric)}${intent.metric ? "" : " (no metric named, so AUC)"}, your best model is experiment ${best.experiment_id}: ${metricLine(metric, best)}.`,
        ];
        if (ranking.length > 1) {
          lines.push("Ranking of your ready experiments:");
          for (const r of ranking.slice(0, 10))
            lines.push(`- experiment ${r.experiment_id}${r.name ? ` ${quote(r.name, 60)}` : ""} (${r.task}): ${metricLine(metric, r)}`);
          const second = ranking[1];
          if (best.ci_low !== null && second.ci_high !== null && best.ci_low <= second.ci_high) {
            lines.push(
              `The intervals of experiments ${best.experiment_id} and ${second.experiment_id} overlap, so the test data do not show a clear difference between them.`,
            );
          }
        }
        const unranked = (result as { not_ranked: number[] }).not_ranked;
        if (unranked.length)
          lines.push(
            `Not ranked (not yours, not ready, or without ${metricLabel(metric)}): experiment${unranked.length > 1 ? "s" : ""} ${unranked.join(", ")}.`,
          );
        return { reply: lines.join("\n"), references: references.filter((r) => ranking.some((x) => String(x.experiment_id) === r.id)) };
      }
      case "experiment_status": {
        const { result, references } = await tools.getExperiment({ experiment_id: intent.experimentId });
        if (!this.found(result)) return { reply: this.notFound(intent.experimentId), references };
        // A class named in the question ("how does it do on melanoma?") asks for that class's metrics.
        const words = new Set(wordsOf(req.message));
        const className = Object.values(result.classes ?? {}).find((c) => words.has(c.toLowerCase()));
        const lead = leadLine(result, { ...intent, className });
        return { reply: lead ? `${lead}\n\n${experimentReport(result)}` : experimentReport(result), references };
      }
      case "list_experiments": {
        const { result, references } = await tools.listExperiments({ status: intent.status as never, task: intent.task });
        const list = (result as { experiments: Listed[] }).experiments;
        if (!list.length)
          return {
            reply: `You have no ${intent.status ? `${intent.status} ` : ""}${intent.task ? `${intent.task} ` : ""}experiments yet.`,
            references: [],
          };
        const lines = [
          `You have ${list.length} ${intent.status ? `${intent.status} ` : ""}${intent.task ? `${intent.task} ` : ""}experiment${list.length === 1 ? "" : "s"}:`,
        ];
        for (const e of list.slice(0, 25)) {
          const detail = e.metric
            ? `, ${metricLine(e.metric.name, e.metric)}`
            : e.failure_reason
              ? ` — ${quote(e.failure_reason, 120)}`
              : "";
          lines.push(`- experiment ${e.experiment_id}${e.name ? ` ${quote(e.name, 60)}` : ""}: ${e.task}, **${e.status}**${detail}`);
        }
        if (list.length > 25) lines.push(`…and ${list.length - 25} more.`);
        return { reply: lines.join("\n"), references };
      }
      case "capabilities":
        return { reply: CAPABILITIES, references: [] };
      case "docs":
        return this.docs(req, req.message);
    }
  }

  private async explain(req: BackendRequest, term: string): Promise<BackendReply> {
    const { result, references } = await req.tools.explain({ term });
    const r = result as {
      kind: string;
      name?: string;
      request_name?: string | null;
      code?: string;
      meaning?: string;
      http_status?: number;
      lower_is_better?: boolean;
    };
    if (r.kind === "metric") {
      return {
        reply: `${metricLabel(r.name!)} (\`${r.name}\`${r.request_name ? `, \`${r.request_name}\` in requests` : ""}): ${r.meaning}. ${r.lower_is_better ? "Lower is better." : "Higher is better."} Builder reports it on held-out test patients with a 95% confidence interval (\`ci_low\`, \`ci_high\`) from a bootstrap over patients.`,
        references,
      };
    }
    if (r.kind === "unknown") return this.docs(req, term);
    const what =
      r.kind === "dataset_error"
        ? "a dataset error (the dataset is refused until it is fixed)"
        : r.kind === "dataset_warning"
          ? "a dataset warning (the dataset stays valid)"
          : `an API error${r.http_status ? ` (HTTP ${r.http_status})` : ""}`;
    return { reply: `\`${r.code}\` is ${what}: ${r.meaning}.`, references };
  }

  private found(r: Facts): r is ExperimentFacts {
    return r.found;
  }

  private notFound(id: number): string {
    return `You have no experiment ${id}. Ask "list my experiments" to see yours.`;
  }

  private async predict(req: BackendRequest, experimentId: number | undefined, task: string | undefined): Promise<BackendReply> {
    const tools = req.tools;
    if (experimentId) {
      const { result, references } = await tools.modelInputs({ experiment_id: experimentId });
      const r = result as { found: boolean; experiment_status?: string | null };
      if (r.found) return { reply: modelHowto(r as Extract<ModelResult, { found: true }>), references };
      return {
        reply: r.experiment_status
          ? `Experiment ${experimentId} has no published model yet (it is **${r.experiment_status}**); /predict works once it is ready.`
          : this.notFound(experimentId),
        references,
      };
    }
    const ready = (await tools.listExperiments({ status: "ready" })).result as { experiments: Listed[] };
    // "the chest X-ray model": prefer the model whose dataset path or label columns share words with the question.
    const words = new Set(wordsOf(req.message));
    const overlap = (e: Listed) => wordsOf(`${e.dataset ?? ""} ${(e.label_cols ?? []).join(" ")}`).filter((w) => words.has(w)).length;
    const candidates = ready.experiments
      .filter((e) => !task || e.task === task)
      .map((e) => ({ e, score: overlap(e) }))
      .sort((a, b) => b.score - a.score)
      .map((x) => x.e);
    if (!candidates.length) {
      const docs = await this.docs(req, "prediction predict message data_cols");
      return {
        reply: `You have no ready ${task ? `${task} ` : ""}model yet. How /predict works in general:\n${docs.reply}`,
        references: docs.references,
      };
    }
    const { result, references } = await tools.modelInputs({ experiment_id: candidates[0].experiment_id });
    const others = candidates.slice(1).map((e) => e.experiment_id);
    const howto = modelHowto(result as Extract<ModelResult, { found: true }>);
    const note = others.length
      ? `\nYour other ready ${task ? `${task} ` : ""}models: experiments ${others.join(", ")} (ask about one by number).`
      : "";
    return { reply: `${howto}${note}`, references };
  }

  private async docs(req: BackendRequest, query: string): Promise<BackendReply> {
    const { result, references } = await req.tools.searchDocs({ query });
    const passages = (result as { passages: Array<{ section: string; source: string; text: string }> }).passages;
    if (!passages.length) return { reply: `I found nothing on that in Builder's documentation.\n\n${CAPABILITIES}`, references: [] };
    const lines = ["From Builder's documentation:"];
    for (const p of passages.slice(0, 2))
      lines.push("", `**${p.section}** (${p.source})`, p.text.length > 600 ? `${p.text.slice(0, 600)}…` : p.text);
    lines.push(
      "",
      'That is the closest the documentation comes. About your own experiments, datasets and models, ask "what can you do?" for the questions I answer from your data.',
    );
    return { reply: lines.join("\n"), references: references.slice(0, 2) };
  }
}
