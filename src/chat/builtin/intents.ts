import { METRIC_NAMES } from "../../contract/types.js";
import { findMetric, type Glossary } from "../glossary.js";
import type { Task } from "../facts.js";
import { anyPhrasesInOrder } from "../phrases.js";

// What the builtin assistant recognises in a message. Plain patterns over the words a clinician uses; the
// message is only ever read for these, never executed or obeyed.

/** What a user may ask the chat to do that only the dashboard or the API does. */
export type Action = "delete" | "retrain" | "threshold" | "cancel" | "rename" | "upload" | "edit";

export type Intent =
  | { kind: "explain_code"; code: string }
  | { kind: "cannot_do"; action: Action; experimentId?: number }
  | { kind: "clinic_ready"; experimentId?: number }
  | { kind: "explain_interval"; experimentId?: number; metric?: string }
  | { kind: "explain_threshold"; experimentId?: number }
  | { kind: "sens_spec"; experimentId?: number }
  | { kind: "build_time"; task?: Task }
  | { kind: "why_refused"; experimentId?: number }
  | { kind: "predict_howto"; experimentId?: number; task?: Task }
  | { kind: "best_model"; metric?: string; task?: Task; experimentIds?: number[] }
  | { kind: "explain_metric"; metric: string }
  | { kind: "experiment_status"; experimentId: number; metric?: string; thresholds?: true; perClass?: true }
  | { kind: "list_experiments"; status?: string; task?: Task }
  | { kind: "capabilities" }
  | { kind: "docs" };

const has = (text: string, re: RegExp) => re.test(text);

// The `A.*B` alternatives of two intents, as phrases in order on one line (phrases.ts says why).
const PREDICT_PHRASES = [
  [/\bcall\b/gi, /\b(model|api)\b/gi],
  [/\b(inputs?|columns?|data_cols)\b/gi, /\bmodel\b/gi],
  [/\bmodel\b/gi, /\b(inputs?|expects?|takes?|columns?)\b/gi],
  [/\b(values|inputs|columns)\b/gi, /\b(send|give|pass)\b/gi],
];
const LIST_PHRASES = [
  [/\b(list|show|which|how many|what|all)\b/gi, /\b(experiments?|models)\b/gi],
  [/\b(experiments?|models)\b/gi, /\b(do i have|have i)\b/gi],
];

export const asksHowToPredict = (text: string) =>
  has(
    text,
    /\bpredict(ion)?s?\b|\bcurl\b|\b(use|run|query) (the|my|this|that|our) ([\w-]+ ){0,3}model\b|\bsend (an? )?(image|values|data)\b/i,
  ) || anyPhrasesInOrder(text, PREDICT_PHRASES);
export const asksForExperiments = (text: string) => has(text, /\bmy (experiments|models)\b/i) || anyPhrasesInOrder(text, LIST_PHRASES);

/** Experiment numbers named in the text: "experiment 42", "exp 7", "#3", "model 12", "experiments 3 and 5". */
export function experimentNumbers(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(
    /\b(?:experiments?|exp\.?|models?|runs?|study|#)\s*(?:no\.?|number|n[º°o]\.?)?\s*#?(\d{1,10})((?:\s*(?:,|and|&|vs\.?|versus|or)\s*#?\d{1,10})*)/gi,
  )) {
    out.push(Number(m[1]));
    for (const n of (m[2] ?? "").matchAll(/\d{1,10}/g)) out.push(Number(n[0]));
  }
  for (const m of text.matchAll(/(?:^|\s)#(\d{1,10})\b/g)) out.push(Number(m[1]));
  return [...new Set(out.filter((n) => n > 0 && n <= 2_147_483_647))];
}

/** A metric named in the text, as its contract name. */
export function metricIn(text: string, glossary: Glossary): string | undefined {
  if (/\bmap\s*(?:@\s*)?(0?\.5|50)\s*[:_-]\s*(0?\.95|95)\b/i.test(text)) return "map50_95";
  if (/\bmap\s*@\s*0?\.5\b/i.test(text)) return "map50";
  const words = text.toLowerCase().match(/[a-z][a-z0-9_-]*(?:\s*@\s*0?\.\d+)?/g) ?? [];
  for (const w of words) {
    const m = findMetric(glossary, w) ?? (METRIC_NAMES as readonly string[]).find((n) => n === w);
    if (m) return typeof m === "string" ? m : m.name;
  }
  if (/\bf1\b|f[- ]?score|f[- ]macro/i.test(text)) return "f_macro";
  if (/\bmean average precision\b|\bmap\b/i.test(text)) return "map50";
  if (/\bcalibrat/i.test(text)) return "ece";
  if (/\br\s*(?:2|²|squared)\b/i.test(text)) return "r2";
  return undefined;
}

/** Every metric named word by word ("precision and recall"), in order, each once. */
export function metricsNamedIn(text: string, glossary: Glossary): string[] {
  const words = text.toLowerCase().match(/[a-z][a-z0-9_-]*/g) ?? [];
  return [...new Set(words.map((w) => findMetric(glossary, w)?.name).filter((n): n is string => !!n))];
}

// A snake_case word. Written as /[a-z][a-z0-9]*(?:_[a-z0-9]+)+/ it rescanned a long word from each of its letters
// (quadratic); every letter of a run of [a-z0-9] gives the same answer, so only the run's start is tried: the
// same matches, each in group 1 (test/unit/chat-intents.test.ts compares the two).
const SNAKE_CASE = /(?<![a-z0-9])[0-9]*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)/gi;
export const snakeCaseWords = (text: string) => [...text.matchAll(SNAKE_CASE)].map((m) => m[1]);

/** A documented error or problem code named in the text (snake_case words only). */
export function codeIn(text: string, glossary: Glossary): string | undefined {
  for (const word of snakeCaseWords(text)) {
    const code = word.toLowerCase();
    if (glossary.codes.has(code)) return code;
  }
  return undefined;
}

export function taskIn(text: string): Task | undefined {
  if (has(text, /\bdetect(ion|or)?\b|\bbox(es)?\b|\bbounding\b/i)) return "detection";
  if (has(text, /\bx-?rays?\b|\bimages?\b|\bscans?\b|\bvision\b|\bphoto|\bslides?\b|\bmri\b|\bct\b|dermoscop|radiograph|fundus/i))
    return "vision";
  if (has(text, /\btabular\b|\btables?\b|\bclinical (data|variables)\b|\bcsv\b|\bdata model\b/i)) return "data";
  return undefined;
}

// Requests, not questions: "delete experiment 1", "can you retrain it", "please change the threshold". A "how do I"
// question about the same actions gets the same answer (where it is done). Uploading is asked about in docs.
const REQUEST =
  /^\W*(?:(?:please|pls|can you|could you|would you|will you|go ahead and|i want you to|i'd like you to)\s+)?(delete|remove|erase|retrain|re-train|rerun|re-run|train|cancel|stop|abort|rename|change|set|lower|raise|adjust|modify|edit|upload)\b/i;
const HOW_DO_I = /\bhow (?:do|can|could) i\s+(delete|remove|erase|retrain|cancel|rename|change|lower|raise)\b/i;

export function actionIn(text: string): Action | undefined {
  const verb = (REQUEST.exec(text) ?? HOW_DO_I.exec(text))?.[1]?.toLowerCase();
  if (!verb) return undefined;
  const aboutThreshold = /\b(thresholds?|cut-?offs?|operating point)\b/i.test(text);
  if (/^(delete|remove|erase)$/.test(verb)) return "delete";
  if (/^(retrain|re-train|rerun|re-run|train)$/.test(verb)) return "retrain";
  if (/^(cancel|stop|abort)$/.test(verb)) return "cancel";
  if (verb === "rename") return "rename";
  if (verb === "upload") return HOW_DO_I.test(text) ? undefined : "upload";
  if (aboutThreshold) return "threshold";
  if (/\bname\b/i.test(text)) return "rename";
  return "edit";
}

// "Is it good enough for clinic?", "can I use it on real patients?", "¿puedo usarlo en la consulta?" (read in English).
const CLINIC_PHRASES = [
  [
    /\b(good enough|ready|safe|fit|ok|okay|usable|suitable|valid)\b/gi,
    /\b(clinic|clinical|practice|patients|hospital|ward|children|real use|care)\b/gi,
  ],
  [
    /\b(use|using|deploy|deploying|rely on|relying on)\b/gi,
    /\b(in|at|on|with|for)\b/gi,
    /\b(clinic|clinical|practice|real patients|my patients|patients|hospital|ward|children)\b/gi,
  ],
  [/\bgood enough\b/gi],
  // "can I use the ultrasound model to decide on biopsies?": a clinical decision asked of a model.
  [
    /\b(can|could|should|may|might|puedo|podemos|debo|deberia)\b/gi,
    /\b(use|using|rely on|trust|usar|usarlo|usarla|fiarme)\b/gi,
    /\b(decide|deciding|decision|decisions|diagnose|diagnosing|treat|treating|treatment|triage|screen|screening|biopsy|biopsies|surgery|refer|decidir|biopsia|biopsias|tratar|tratamiento|cribado|operar)\b/gi,
  ],
];
export const asksIfClinicReady = (text: string) => anyPhrasesInOrder(text, CLINIC_PHRASES);

const STATUS_WORDS: Array<[RegExp, string]> = [
  [/\bfail(ed|ures?)?\b/i, "failed"],
  [/\binvalid\b|\brefused\b|\brejected\b/i, "invalid_dataset"],
  [/\bready\b|\bfinished\b|\bcompleted?\b|\bsucceeded\b|\bdone\b/i, "ready"],
  [/\brunning\b|\btraining\b|\bin progress\b/i, "training"],
  [/\bqueued\b|\bwaiting\b|\bpending\b/i, "queued"],
  [/\bcancel(l)?ed\b/i, "cancelled"],
];

/** Words that point at the experiment on screen ("this model", "su AUC", "este modelo"). */
const DEICTIC = /\b(it|its|this|that)\b|(^|[^\p{L}])(este|esta|ese|esa|su|sus)(?![\p{L}])/iu;

export function recognise(message: string, glossary: Glossary, context: { experimentId?: number }): Intent {
  const text = message.trim();
  const nums = experimentNumbers(text);
  const expId = nums[0] ?? context.experimentId;
  const metric = metricIn(text, glossary);
  const code = codeIn(text, glossary);
  const task = taskIn(text);

  if (code) return { kind: "explain_code", code };
  const action = actionIn(text);
  if (action) return { kind: "cannot_do", action, ...(expId ? { experimentId: expId } : {}) };
  if (asksIfClinicReady(text)) return { kind: "clinic_ready", ...(expId ? { experimentId: expId } : {}) };
  if (has(text, /\bhow long\b|\bhow much time\b/i) && !nums.length && !context.experimentId)
    return { kind: "build_time", ...(task ? { task } : {}) };
  if (has(text, /\b(confidence interval|interval|95 ?%|ci)\b/i) && !has(text, /\b(list|rank|best|compare)\b/i))
    return { kind: "explain_interval", ...(expId ? { experimentId: expId } : {}), ...(metric ? { metric } : {}) };
  if (
    has(text, /\b(thresholds?|cut-?offs?|operating point)\b/i) &&
    has(text, /\b(trade|trade-?off|trades|meaning|means|mean|explain|why|gain|lose|cost)\b/i)
  )
    return { kind: "explain_threshold", ...(expId ? { experimentId: expId } : {}) };
  if (has(text, /\bsensitivity\b/i) && has(text, /\bspecificity\b/i) && !has(text, /\b(best|highest|rank|compare)\b/i))
    return { kind: "sens_spec", ...(expId ? { experimentId: expId } : {}) };
  if (
    has(text, /\b(why|reason|what went wrong|what('s| is) wrong|fix)\b/i) &&
    has(text, /\b(refus|reject|fail|invalid|not valid|error|wrong|didn'?t work|did not work)/i)
  ) {
    return { kind: "why_refused", experimentId: expId };
  }
  if (asksHowToPredict(text)) {
    return { kind: "predict_howto", experimentId: nums[0] ?? context.experimentId, task };
  }
  // "What is this model's AUC?" asked on an experiment's page (the dashboard's chat panel sends it) wants that
  // experiment's figure, not the definition; "what does this AUC mean" still gets the definition.
  if (
    metric &&
    context.experimentId &&
    !nums.length &&
    has(text, DEICTIC) &&
    !has(text, /\b(mean|means|meaning|explain|define|definition|best|highest|top|better|compare|rank|versus)\b/i)
  )
    return { kind: "experiment_status", experimentId: context.experimentId, metric };
  if (has(text, /\b(best|highest|top|better|strongest|compare|comparison|rank|lowest error|versus|vs\.?)\b/i)) {
    return { kind: "best_model", metric, task, ...(nums.length >= 2 ? { experimentIds: nums } : {}) };
  }
  // "what is its AUC?" with an experiment in focus asks for its figure, not for what AUC means.
  if (metric && context.experimentId && !nums.length && has(text, /\b(its|it)\b/i) && !has(text, /\b(mean|means|meaning)\b/i))
    return { kind: "experiment_status", experimentId: context.experimentId, metric };
  if (metric && has(text, /\b(mean|means|meaning|what('s| is| are)|explain|definition|define|interpret|understand)\b/i) && !nums.length) {
    return { kind: "explain_metric", metric };
  }
  if (
    nums.length ||
    (context.experimentId && has(text, /\b(it|its|this|that|status|metrics?|doing|trust|good|going|progress|results?)\b/i))
  ) {
    if (expId)
      return {
        kind: "experiment_status",
        experimentId: expId,
        ...(metric ? { metric } : {}),
        ...(/\bthresholds?\b|\bcut-?offs?\b/i.test(text) ? { thresholds: true as const } : {}),
        ...(/\bper[- ]class\b|\beach (class|label)\b|\bby class\b|\bon (the |its )?\w+ (class|cases)\b/i.test(text)
          ? { perClass: true as const }
          : {}),
      };
  }
  if (asksForExperiments(text)) {
    const status = STATUS_WORDS.find(([re]) => re.test(text))?.[1];
    return { kind: "list_experiments", status, task };
  }
  if (metric) return { kind: "explain_metric", metric };
  if (has(text, /^(help|hi|hello|hey)\b|what can you do|what do you know|how can you help|who are you/i)) return { kind: "capabilities" };
  return { kind: "docs" };
}
