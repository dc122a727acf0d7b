import type { BackendReply, BackendRequest, ChatBackend } from "../backend.js";
import { uniqueReferences } from "../backend.js";
import type { ExperimentFacts, Task } from "../facts.js";
import type { Glossary } from "../glossary.js";
import { conversationLanguage, detectLanguage } from "../language.js";
import type { Reference } from "../repository.js";
import { resolveExperiment, vocabulariesKey, vocabulary, type Candidate, type Resolution } from "../resolve.js";
import type { ListedExperiment } from "../tools.js";
import {
  bestModelReply,
  docsReply,
  explainMetricReply,
  explainReply,
  listReply,
  notFound,
  predictReply,
  statusReply,
  whyRefusedReply,
} from "./answers.js";
import type { ReplyContext } from "./context.js";
import { intervalReply, sensSpecReply, thresholdReply } from "./figures.js";
import { recognise, type Intent } from "./intents.js";
import { exampleWords, readDocsTopics } from "../matcher/table.js";
import { monitoringReply } from "./monitoring.js";
import { asksForThresholds, asksPerClass, experimentNumbers, metricIn, taskIn } from "./slots.js";
import { buildTimeReply, cannotDoReply, clinicReadyReply } from "./limits.js";
import { askWhich, asksForHeatMap, heatMapLead, heatMapMismatch, inputKindMismatch, noneFits } from "./resolve-replies.js";
import { capabilities, mainMetric, metricLine, notUnderstood, pageLink, testPatients } from "./templates.js";

const candidateOf = (e: ListedExperiment): Candidate => ({
  experiment_id: e.experiment_id,
  task: e.task,
  status: e.status,
  name: e.name,
  description: e.description,
  dataset: e.dataset,
  label_cols: e.label_cols,
});

/**
 * The words that name nothing of the user's: the documentation's and the example questions' (src/chat/intents), less
 * the words of the user's own names and descriptions. A word outside them may name a model ("la ecografía mamaria").
 * Kept for the last few workspaces by their vocabularies: 200 descriptions of distinct words cost ~5 ms to go through
 * (bench/chat/worst-case.ts), and a workspace's experiments rarely change between two questions.
 */
export function knownWords(glossaryWords: ReadonlySet<string>, all: Candidate[]): ReadonlySet<string> {
  const key = vocabulariesKey(all);
  let byKey = KNOWN.get(glossaryWords);
  if (!byKey) KNOWN.set(glossaryWords, (byKey = new Map<string, ReadonlySet<string>>()));
  const cached = byKey.get(key);
  if (cached) return cached;
  // A word that starts like one of theirs may be it misspelt ("diabetis" for "Diabetes"): never "known".
  const starts = new Set<string>();
  for (const c of all) for (const w of vocabulary(c)) if (w.length >= 5) starts.add(w.slice(0, 4));
  const known = new Set<string>();
  for (const words of [glossaryWords, EXAMPLE_WORDS]) for (const w of words) if (!starts.has(w.slice(0, 4))) known.add(w);
  if (byKey.size >= 8) byKey.delete(byKey.keys().next().value!);
  byKey.set(key, known);
  return known;
}
const KNOWN = new WeakMap<ReadonlySet<string>, Map<string, ReadonlySet<string>>>();
const EXAMPLE_WORDS = exampleWords();
const DOCS_TOPICS = readDocsTopics();
/** The language Builder's documentation (docs/, README.md) is written in. */
const DOCS_LANGUAGE = "en";

/** How many earlier user messages may name the experiment a follow-up question ("and its metrics?") is about. */
const EARLIER_ASKED = 3;

/** What the builtin reads of a message: its first characters (features.ts says why), enough for any question. */
const MAX_READ = 600;

/** The kind of model a question needs: a heat map an image model, boxes a detector, columns a tabular one. */
function impliedTask(text: string): Task | undefined {
  return asksForHeatMap(text) ? "vision" : taskIn(text);
}

// Intents that need one experiment's facts; the others are about none or several.
type AboutOne = Extract<Intent, { kind: "clinic_ready" | "explain_interval" | "explain_threshold" | "sens_spec" }>;

/**
 * The embedded assistant: no LLM and no network. It reads the message in either language (corrected and put into
 * the English its patterns know), finds the experiment meant by number or by what it is, answers with the same
 * typed tools an LLM would call, in the message's language, and cites what it used.
 */
export class BuiltinBackend implements ChatBackend {
  readonly name = "builtin" as const;
  constructor(private readonly glossary: Glossary) {}
  /** The experiment an earlier message named (0: none), by workspace state and message: see earlierExperiment. */
  private readonly earlierNamed = new Map<string, number>();

  async answer(req: BackendRequest): Promise<BackendReply> {
    const listed = await req.tools.listExperiments({});
    const all = listed.result.experiments.map(candidateOf);
    const known = knownWords(this.glossary.words, all);
    const read = (message: string) => message.slice(0, MAX_READ);
    const ctx: ReplyContext = {
      req,
      tools: req.tools,
      glossary: this.glossary,
      lang: detectLanguage(read(req.message), conversationLanguage(req.history)),
      text: read(req.message),
      all,
      known,
    };
    // "and its metrics?" after a question about experiment 7, or about "my diabetes model", is about that one.
    const earlier = this.earlierExperiment(
      req.history.map((m) => ({ role: m.role, content: read(m.content) })),
      all,
      known,
    );
    const intent = recognise(ctx.text, this.glossary, { experimentId: req.experimentId ?? earlier });
    const out = await this.answerNamed(intent, ctx, listed.references);
    const reply = { reply: out.reply, references: uniqueReferences(out.references) };
    if (req.onToken) for (const piece of reply.reply.match(/\S+\s*|\s+/g) ?? []) req.onToken(piece);
    return reply;
  }

  /** The one experiment a message names, by number or unambiguously in words; undefined otherwise. */
  private experimentNamedIn(text: string, all: Candidate[], known: ReadonlySet<string>): number | undefined {
    const numbered = experimentNumbers(text)[0];
    if (numbered) return numbered;
    const r = resolveExperiment(text, all, { known });
    return r.kind === "one" ? r.experiment.experiment_id : r.kind === "number" ? r.experimentId : undefined;
  }

  /**
   * The experiment the newest earlier user message named, searched newest first among the last EARLIER_ASKED user
   * messages: a conversation refers back a question or two, and each message read costs a resolver pass (bench/chat).
   */
  private earlierExperiment(history: BackendRequest["history"], all: Candidate[], known: ReadonlySet<string>): number | undefined {
    // The same earlier messages are read request after request: what each named is kept per workspace state (the
    // candidates' ids, kinds, states and vocabularies, which with the glossary decide `known` too).
    const workspace = `${all.map((c) => `${c.experiment_id}/${c.task}/${c.status}`).join(",")}|${vocabulariesKey(all)}`;
    let asked = 0;
    for (let i = history.length - 1; i >= 0 && asked < EARLIER_ASKED; i--) {
      if (history[i].role !== "user") continue;
      asked++;
      const key = `${workspace}\u0000${history[i].content}`;
      let named = this.earlierNamed.get(key);
      if (named === undefined) {
        named = this.experimentNamedIn(history[i].content, all, known) ?? 0;
        // Bounded: a key is a workspace's ids and a message (a few kilobytes).
        if (this.earlierNamed.size >= 500) this.earlierNamed.delete(this.earlierNamed.keys().next().value!);
        this.earlierNamed.set(key, named);
      }
      if (named) return named;
    }
    return undefined;
  }

  /**
   * A model named in words ("my breast cancer model", "el último") is resolved among the caller's experiments first,
   * with the kind the question implies settling a tie: one fit is answered as if numbered, a tie or no fit is said
   * instead of guessing. Then a question that needs another kind of model (a heat map of a tabular one, an image
   * sent to a tabular one) says so instead of answering about the wrong kind.
   */
  private async answerNamed(intent: Intent, ctx: ReplyContext, listedRefs: Reference[]): Promise<BackendReply> {
    if (intent.kind === "best_model" || intent.kind === "explain_code" || intent.kind === "build_time") return this.run(intent, ctx);
    const { all, text, lang } = ctx;
    const refsOf = (cs: Candidate[]) => listedRefs.filter((r) => cs.some((c) => String(c.experiment_id) === r.id));
    const resolution: Resolution = experimentNumbers(text).length
      ? { kind: "none_named" }
      : resolveExperiment(text, all, { implied: impliedTask(text), known: ctx.known });
    let target: Intent = intent;
    switch (resolution.kind) {
      case "ambiguous":
        return { reply: askWhich(resolution.candidates, lang), references: refsOf(resolution.candidates) };
      case "no_match":
        return { reply: noneFits(resolution.words, all, lang), references: [] };
      case "number":
        target = this.about(intent, resolution.experimentId, text);
        break;
      case "one":
        target = this.about(intent, resolution.experiment.experiment_id, text);
        break;
    }
    const id = "experimentId" in target ? target.experimentId : undefined;
    const picked = id ? all.find((c) => c.experiment_id === id) : undefined;
    if (picked && asksForHeatMap(text) && target.kind !== "cannot_do") {
      const mismatch = heatMapMismatch(picked, lang);
      if (mismatch) return { reply: mismatch, references: refsOf([picked]) };
      // What the map explains is only as good as the model: its main figure, then its page.
      const { result, references } = await ctx.tools.getExperiment({ experiment_id: picked.experiment_id });
      const main = result.found ? mainMetric(result) : undefined;
      const figure = result.found && main ? `\n${metricLine(main, result.metrics[main], lang)}${testPatients(result, lang)}.` : "";
      return { reply: `${heatMapLead(picked, lang)}${figure}\n${pageLink(picked.experiment_id, lang)}`, references };
    }
    const implied = target.kind === "predict_howto" ? target.task : undefined;
    const mismatch = picked && implied ? inputKindMismatch(picked, implied, lang) : undefined;
    if (mismatch) return { reply: mismatch, references: refsOf([picked!]) };
    return this.run(target, ctx);
  }

  /** The intent, pointed at the experiment the words resolved to; a question with no intent of its own asks for its report. */
  private about(intent: Intent, experimentId: number, text: string): Intent {
    switch (intent.kind) {
      case "predict_howto":
      case "why_refused":
      case "experiment_status":
      case "cannot_do":
      case "clinic_ready":
      case "explain_interval":
      case "explain_threshold":
      case "sens_spec":
      case "monitoring":
        return { ...intent, experimentId };
      default: {
        const metric = metricIn(text, this.glossary);
        return {
          kind: "experiment_status",
          experimentId,
          ...(metric ? { metric } : {}),
          ...(asksForThresholds(text) ? { thresholds: true as const } : {}),
          ...(asksPerClass(text) ? { perClass: true as const } : {}),
        };
      }
    }
  }

  private async run(intent: Intent, ctx: ReplyContext): Promise<BackendReply> {
    switch (intent.kind) {
      case "explain_metric":
        return explainMetricReply(ctx, intent.metric);
      case "explain_code":
        return explainReply(ctx, intent.code);
      case "why_refused":
        return whyRefusedReply(ctx, intent.experimentId);
      case "predict_howto":
        return predictReply(ctx, intent.experimentId, intent.task);
      case "best_model":
        return bestModelReply(ctx, intent);
      case "experiment_status":
        return statusReply(ctx, intent);
      case "list_experiments":
        return listReply(ctx, intent);
      case "capabilities":
        return { reply: capabilities(ctx.lang), references: [] };
      case "docs":
        // The documentation is English: a question in another language is looked up by its topic's English words.
        return docsReply(
          ctx,
          ctx.lang !== DOCS_LANGUAGE && intent.topic && DOCS_TOPICS[intent.topic] ? DOCS_TOPICS[intent.topic] : ctx.text,
        );
      case "not_understood":
        return { reply: `${notUnderstood(ctx.lang)}\n\n${capabilities(ctx.lang)}`, references: [] };
      case "which_experiment":
        // A question about one experiment that names none: which one, never a guess.
        return this.aboutOne(ctx, { kind: "clinic_ready" }, "ask");
      case "monitoring": {
        const id = intent.experimentId ?? this.onlyReady(ctx);
        return id ? monitoringReply(ctx, id) : this.aboutOne(ctx, { kind: "clinic_ready" }, "ask");
      }
      case "cannot_do":
        return cannotDoReply(ctx, intent.action, intent.experimentId);
      case "build_time": {
        const { result, references } = await ctx.tools.buildTimes(intent.task ? { task: intent.task } : {});
        const out = buildTimeReply(ctx, result);
        return { reply: out.reply, references };
      }
      case "sens_spec":
        if (!intent.experimentId && !this.onlyReady(ctx)) return explainMetricReply(ctx, "sensitivity");
        return this.aboutOne(ctx, intent);
      case "clinic_ready":
      case "explain_interval":
      case "explain_threshold":
        return this.aboutOne(ctx, intent);
    }
  }

  /** The one ready experiment, when the user has exactly one. */
  private onlyReady(ctx: ReplyContext): number | undefined {
    const ready = ctx.all.filter((c) => c.status === "ready");
    return ready.length === 1 ? ready[0].experiment_id : undefined;
  }

  /** A reply about one experiment's figures: the one named or focused, the only ready one, or a question back. */
  private async aboutOne(ctx: ReplyContext, intent: AboutOne, only?: "ask"): Promise<BackendReply> {
    const id = only ? undefined : (intent.experimentId ?? this.onlyReady(ctx));
    if (!id) {
      const ready = ctx.all.filter((c) => c.status === "ready");
      if (!ready.length) return { reply: capabilities(ctx.lang), references: [] };
      return { reply: askWhich(ready, ctx.lang), references: [] };
    }
    const { result, references } = await ctx.tools.getExperiment({ experiment_id: id });
    if (!result.found) return { reply: notFound(ctx, id), references };
    const facts: ExperimentFacts = result;
    const out =
      intent.kind === "clinic_ready"
        ? clinicReadyReply(ctx, facts)
        : intent.kind === "explain_interval"
          ? intervalReply(ctx, facts, intent.metric)
          : intent.kind === "explain_threshold"
            ? thresholdReply(ctx, facts)
            : sensSpecReply(ctx, facts);
    return { reply: out.reply, references };
  }
}
