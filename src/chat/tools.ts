import { z } from "zod";
import { STATUSES, type ExperimentStatus } from "../experiments/state.js";
import { METRIC_NAMES, type MetricName } from "../contract/types.js";
import type { DocsIndex } from "./docs-index.js";
import { findMetric } from "./glossary.js";
import type { Reference } from "./repository.js";
import { findExperiments } from "./resolve.js";
import { summarizeMonitoring, type MonitoringReader, type MonitoringSummary } from "./monitoring-summary.js";
import type { ChatExperiment, ChatReads } from "./reads.js";
import { experimentFacts, failureTextOf, metricOf, modelFacts, taskOf, type ExperimentFacts, type Task } from "./facts.js";
import type { Scope } from "../workspaces/scope.js";

// The assistant's tools: one small typed set, each bound in code to the caller's user id. No argument names a
// user, so nothing a message says (or a model emits) can reach another user's experiments, datasets or models.

export interface ToolResult<T = unknown> {
  result: T;
  references: Reference[];
}

/** Metrics where a lower value is better; every other metric ranks higher-is-better. */
export const LOWER_IS_BETTER = new Set(["ece", "mae", "rmse"]);

const experimentId = z.number().int().positive().max(2_147_483_647).describe("the experiment number, as the user names it");
const metricName = z
  .enum(METRIC_NAMES)
  .describe("contract metric name: auc, f_macro, precision, recall, accuracy, ece, mae, rmse, r2, map50, map50_95");

export const toolSchemas = {
  list_experiments: z.object({
    status: z.enum(STATUSES).optional().describe("only experiments in this state"),
    task: z
      .enum(["data", "vision", "detection"])
      .optional()
      .describe("data = tables, vision = image classification/regression, detection = boxes"),
    metric: metricName.optional().describe("only experiments that have this test metric, best first"),
  }),
  find_experiments: z.object({
    query: z
      .string()
      .min(1)
      .max(200)
      .describe(
        "the words the user calls the experiment by: its name, disease, dataset, label, or kind (image, tabular, detection); 'latest' for the newest",
      ),
  }),
  get_experiment: z.object({ experiment_id: experimentId }),
  compare_experiments: z.object({
    metric: metricName,
    experiment_ids: z.array(experimentId).max(50).optional().describe("limit the comparison to these; default all ready experiments"),
  }),
  model_inputs: z.object({ experiment_id: experimentId }),
  build_times: z.object({
    task: z.enum(["data", "vision", "detection"]).optional().describe("only past builds of this kind"),
  }),
  search_docs: z.object({ query: z.string().min(1).max(500).describe("words to look for in Builder's documentation") }),
  explain: z.object({
    term: z.string().min(1).max(100).describe("a metric (auc, F-macro, recall, ...) or an error/problem code (class_too_small, ...)"),
  }),
} as const;

export type ToolName = keyof typeof toolSchemas;

export const toolDescriptions: Record<ToolName, string> = {
  list_experiments: "List the user's experiments with status, task, metric and failure reason, optionally filtered.",
  find_experiments:
    'Which of the user\'s experiments a name or description means ("my breast cancer model" → query "breast cancer"): the best-fitting ones with number, name, task and status. Several matches: ask the user which one; none: say so, never pick another.',
  get_experiment:
    "One experiment of the user: status, history, test metrics with 95% intervals, thresholds, dataset summary, dataset problems, failure reason, model.",
  compare_experiments: "Rank the user's ready experiments on one test metric (value and 95% interval).",
  model_inputs: "What a published model of the user takes (data_cols or image size, classes) and a ready-to-run /predict call.",
  build_times:
    "How long a build takes here: the training budgets (fast and best mode) and how long the user's own past builds took, with their dataset sizes.",
  search_docs: "Full-text search of Builder's documentation; returns the best passages with their section.",
  explain: "What a metric or an error/problem code means, from the documentation's tables.",
};

const expRef = (row: ChatExperiment): Reference => ({
  type: "experiment",
  id: String(row.experimentId),
  title: `experiment ${row.experimentId} (${taskOf(row)}, ${row.status})`,
});

export class ChatTools {
  constructor(
    /** Whose questions, in which workspace: the tools read only that workspace. */
    private readonly scope: Scope,
    private readonly deps: {
      /** Bounded reads of the user's experiments and models (never a split, never a manifest's codes). */
      reads: ChatReads;
      docs: DocsIndex;
      publicUrl: string;
      /** Training budgets in seconds (FAST_BUDGET_S, BEST_BUDGET_S). */
      budgets?: { fast: number; best: number };
      /** The monitoring report of one of the user's models (src/monitoring); absent where monitoring is not wired. */
      monitoring?: MonitoringReader;
    },
  ) {}

  /** Validates the arguments (a model may send anything) and runs the tool. Throws ToolArgumentError on bad arguments. */
  async call(name: string, args: unknown): Promise<ToolResult> {
    // Own keys only: `in` also finds Object.prototype's (constructor, toString, __proto__…), and a model may name any.
    if (!Object.hasOwn(toolSchemas, name)) throw new ToolArgumentError(`no tool named ${JSON.stringify(name).slice(0, 60)}`);
    const parsed = toolSchemas[name as ToolName].safeParse(args ?? {});
    if (!parsed.success)
      throw new ToolArgumentError(parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; "));
    const input = parsed.data as never;
    switch (name as ToolName) {
      case "list_experiments":
        return this.listExperiments(input);
      case "find_experiments":
        return this.findExperiments(input);
      case "get_experiment":
        return this.getExperiment(input);
      case "compare_experiments":
        return this.compareExperiments(input);
      case "model_inputs":
        return this.modelInputs(input);
      case "build_times":
        return this.buildTimes(input);
      case "search_docs":
        return this.searchDocs(input);
      case "explain":
        return this.explain(input);
    }
  }

  /**
   * The monitoring figures of one of the user's experiments over the last `days` days (monitoring-summary.ts). The
   * builtin's only, not an LLM tool yet: the monitoring report reads the model's whole manifest, more than the 64 KiB
   * every LLM tool is held to (test/integration/chat-bounded-reads.test.ts) for a model with many columns.
   */
  async getMonitoring(args: { experiment_id: number; days?: number }): Promise<ToolResult<MonitoringSummary>> {
    const row = await this.deps.reads.experiment(this.scope.workspace.id, args.experiment_id);
    if (!row) return { result: { found: false, experiment_id: args.experiment_id }, references: [] };
    const days = args.days ?? 30;
    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    const ref: Reference = { type: "model", id: String(args.experiment_id), title: `monitoring of experiment ${args.experiment_id}` };
    return { result: await summarizeMonitoring(this.deps.monitoring, this.scope, row, { from, to, days }), references: [ref] };
  }

  async listExperiments(args: z.infer<typeof toolSchemas.list_experiments>) {
    const rows = await this.deps.reads.experiments(this.scope.workspace.id, {
      status: args.status ? [args.status] : undefined,
      limit: 200,
    });
    let picked = rows.filter((r) => !args.task || taskOf(r) === args.task);
    if (args.metric) {
      const m = args.metric;
      picked = picked.filter((r) => metricOf(r, m) !== undefined);
      picked.sort((a, b) => (metricOf(b, m)!.value - metricOf(a, m)!.value) * (LOWER_IS_BETTER.has(m) ? -1 : 1));
    }
    const experiments = picked.map((r) => {
      const req = r.request as { study_type?: string; zip_gcloud?: string; label_cols?: string[]; optimization_metric?: string };
      const main = args.metric ?? (metricOf(r, "auc") ? "auc" : metricOf(r, "map50") ? "map50" : metricOf(r, "r2") ? "r2" : undefined);
      const mainValue = main ? metricOf(r, main) : undefined;
      return {
        experiment_id: r.experimentId,
        // The user's own words for it: an LLM resolves "my breast cancer model" from these (user text, so data).
        name: r.name ?? null,
        description: r.description ?? null,
        status: r.status,
        task: taskOf(r),
        study_type: req.study_type ?? null,
        dataset: req.zip_gcloud ?? null,
        label_cols: req.label_cols ?? [],
        optimization_metric: req.optimization_metric ?? null,
        ...(main && mainValue ? { metric: { name: main, ...mainValue } } : {}),
        failure_reason: r.status === "failed" || r.status === "invalid_dataset" ? r.failureReason : null,
        failure_text: failureTextOf(r),
        created_at: r.createdAt,
      };
    });
    return { result: { total: experiments.length, experiments }, references: picked.slice(0, 20).map(expRef) };
  }

  async findExperiments(args: { query: string }) {
    const rows = await this.deps.reads.experiments(this.scope.workspace.id, { limit: 200 });
    const candidates = rows.map((r) => {
      const req = r.request as { zip_gcloud?: string; label_cols?: string[] };
      return {
        experiment_id: r.experimentId,
        name: r.name ?? null,
        description: r.description ?? null,
        task: taskOf(r),
        status: r.status,
        dataset: req.zip_gcloud ?? null,
        label_cols: req.label_cols ?? [],
      };
    });
    const matches = findExperiments(args.query, candidates);
    return {
      result: { query: args.query, matches },
      references: rows.filter((r) => matches.some((m) => m.experiment_id === r.experimentId)).map(expRef),
    };
  }

  async getExperiment(args: { experiment_id: number }): Promise<ToolResult<ExperimentFacts | { found: false; experiment_id: number }>> {
    const row = await this.deps.reads.experiment(this.scope.workspace.id, args.experiment_id);
    if (!row) return { result: { found: false, experiment_id: args.experiment_id }, references: [] };
    const model = await this.deps.reads.latestModel(this.scope.workspace.id, args.experiment_id);
    const facts = experimentFacts(row, model);
    const refs: Reference[] = [expRef(row)];
    if (facts.dataset.zip_gcloud)
      refs.push({ type: "dataset", id: facts.dataset.zip_gcloud, title: `dataset of experiment ${row.experimentId}` });
    if (model)
      refs.push({
        type: "model",
        id: String(row.experimentId),
        title: `model of experiment ${row.experimentId}, version ${model.version}`,
      });
    return { result: facts, references: refs };
  }

  async compareExperiments(args: z.infer<typeof toolSchemas.compare_experiments>) {
    const rows = await this.deps.reads.experiments(this.scope.workspace.id, { status: ["ready"], limit: 500 });
    const wanted = args.experiment_ids ? new Set(args.experiment_ids) : undefined;
    const ranked = rows
      .filter((r) => (!wanted || wanted.has(r.experimentId)) && metricOf(r, args.metric) !== undefined)
      .map((r) => ({ row: r, m: metricOf(r, args.metric)! }))
      .sort((a, b) => (b.m.value - a.m.value) * (LOWER_IS_BETTER.has(args.metric) ? -1 : 1));
    return {
      result: {
        metric: args.metric,
        better: LOWER_IS_BETTER.has(args.metric) ? "lower" : "higher",
        ranking: ranked.map(({ row, m }) => ({
          experiment_id: row.experimentId,
          name: row.name ?? null,
          task: taskOf(row),
          value: m.value,
          ci_low: m.ci_low,
          ci_high: m.ci_high,
        })),
        not_ranked: (args.experiment_ids ?? []).filter((id) => !ranked.some((x) => x.row.experimentId === id)),
      },
      references: ranked.slice(0, 10).map(({ row }) => expRef(row)),
    };
  }

  async modelInputs(args: { experiment_id: number }) {
    const model = await this.deps.reads.latestModel(this.scope.workspace.id, args.experiment_id);
    if (!model) {
      const row = await this.deps.reads.experiment(this.scope.workspace.id, args.experiment_id);
      return {
        result: { found: false as const, experiment_id: args.experiment_id, experiment_status: row?.status ?? null },
        references: row ? [expRef(row)] : [],
      };
    }
    const facts = modelFacts(model, this.deps.publicUrl);
    return {
      result: facts,
      references: [
        {
          type: "model" as const,
          id: String(model.experimentId),
          title: `model of experiment ${model.experimentId}, version ${model.version}`,
        },
      ],
    };
  }

  /** The budgets and the user's finished builds, newest first: seconds from the first history entry to `ready`. */
  async buildTimes(args: { task?: Task }) {
    const rows = await this.deps.reads.experiments(this.scope.workspace.id, { status: ["ready"], limit: 200 });
    const past = rows
      .filter((r) => !args.task || taskOf(r) === args.task)
      .map((r) => {
        const history = (r.history as Array<{ status: string; at: string }> | null) ?? [];
        const start = Date.parse(history[0]?.at ?? "");
        const end = Date.parse(history.findLast((h) => h.status === "ready")?.at ?? "");
        const summary = (r.datasetReport as { summary?: { rows?: number; images?: number } } | null)?.summary;
        const req = r.request as { optimization_type?: number; time_budget_s?: number };
        return {
          experiment_id: r.experimentId,
          task: taskOf(r),
          mode: req.optimization_type === 0 ? ("best" as const) : ("fast" as const),
          took_s: Number.isFinite(end - start) ? Math.round((end - start) / 1000) : null,
          rows: summary?.rows ?? null,
          images: summary?.images ?? null,
        };
      })
      .filter((b) => b.took_s !== null && b.took_s >= 1);
    const budgets = this.deps.budgets ?? { fast: 150, best: 720 };
    return {
      result: { budgets_s: budgets, past: past.slice(0, 10) },
      references: [
        {
          type: "doc" as const,
          id: "docs/experiments.md#budgets-contract-publishing-callbacks",
          title: "Experiments › Budgets, contract, publishing, callbacks",
        },
      ],
    };
  }

  async searchDocs(args: { query: string }, limit = 3) {
    const hits = await this.deps.docs.search(args.query, limit);
    return {
      result: {
        passages: hits.map((h) => ({
          section: h.heading,
          source: `${h.source}#${h.anchor}`,
          text: h.body.length > 900 ? `${h.body.slice(0, 900)}…` : h.body,
        })),
      },
      references: hits.map((h) => ({ type: "doc" as const, id: `${h.source}#${h.anchor}`, title: h.heading })),
    };
  }

  async explain(args: { term: string }) {
    const g = this.deps.docs.glossary;
    const term = args.term.trim().replace(/^`|`$/g, "");
    const metric = findMetric(g, term);
    if (metric) {
      return {
        result: {
          kind: "metric" as const,
          name: metric.name,
          request_name: metric.requestName ?? null,
          meaning: metric.meaning,
          lower_is_better: LOWER_IS_BETTER.has(metric.name),
        },
        references: [{ type: "doc" as const, id: `${metric.source}#${metric.anchor}`, title: metric.heading }],
      };
    }
    const code = g.codes.get(term.toLowerCase());
    if (code) {
      return {
        result: { kind: code.kind, code: code.code, meaning: code.meaning, ...(code.status ? { http_status: code.status } : {}) },
        references: [{ type: "doc" as const, id: `${code.source}#${code.anchor}`, title: code.heading }],
      };
    }
    const found = await this.searchDocs({ query: term }, 2);
    return {
      result: { kind: "unknown" as const, term, closest_passages: found.result.passages },
      references: found.references,
    };
  }
}

export class ToolArgumentError extends Error {}

/** A metric name as the tools take it; AUC when the name is none of the contract's. */
export const asMetricName = (name: string): MetricName => METRIC_NAMES.find((n) => n === name) ?? "auc";
/** An experiment status as the tools take it, or undefined. */
export const asStatus = (status: string | undefined): ExperimentStatus | undefined => STATUSES.find((s) => s === status);

/** What each tool returns: the backends read these types, never cast. */
type ResultOf<K extends keyof ChatTools> = ChatTools[K] extends (...args: never[]) => Promise<ToolResult<infer R>> ? R : never;
export type ListedExperiment = ResultOf<"listExperiments">["experiments"][number];
export type Ranking = ResultOf<"compareExperiments">;
export type ModelInputs = ResultOf<"modelInputs">;
export type PublishedModel = Extract<ModelInputs, { found: true }>;
export type Explanation = ResultOf<"explain">;
export type BuildTimes = ResultOf<"buildTimes">;
export type DocPassage = ResultOf<"searchDocs">["passages"][number];
