import type { Glossary } from "../glossary.js";
import type { Task } from "../facts.js";
import { intentMatcher } from "../matcher/index.js";
import { asksForThresholds, asksPerClass, codeIn, experimentNumbers, metricIn, statusIn, taskIn } from "./slots.js";

// What the builtin assistant makes of a message (issue 53): the intent a matcher trained on example questions
// (src/chat/intents/*.json) finds most probable, and the slots its extractors find (slots.ts). No word lists, no
// rewrite into English, no cascade of patterns: a question the matcher is unsure of is answered with what the chat
// can answer instead of a guess. The message is only ever read for these, never executed or obeyed.

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
  | { kind: "which_experiment" }
  | { kind: "monitoring"; experimentId?: number }
  | { kind: "list_experiments"; status?: string; task?: Task }
  | { kind: "capabilities" }
  | { kind: "docs"; topic?: string }
  | { kind: "not_understood" };

/** Below this probability the matcher's best guess is not answered: the chat says what it can answer instead. */
export const MIN_CONFIDENCE = 0.2;

const ACTIONS = new Set<string>(["delete", "retrain", "threshold", "cancel", "rename", "upload", "edit"]);

/** The intent of a message and its slots; `context.experimentId` is the experiment open on screen or named before. */
export function recognise(message: string, glossary: Glossary, context: { experimentId?: number }): Intent {
  const text = message.trim();
  const code = codeIn(text, glossary);
  // A documented code is a question about that code whatever the wording: "I got rate_limit_exceeded".
  if (code) return { kind: "explain_code", code };
  const { intent, confidence } = intentMatcher().match(text);
  if (confidence < MIN_CONFIDENCE) return { kind: "not_understood" };
  const nums = experimentNumbers(text);
  const expId = nums[0] ?? context.experimentId;
  const metric = metricIn(text, glossary);
  const task = taskIn(text);
  const one = expId ? { experimentId: expId } : {};
  const [family, detail] = intent.split(".");
  switch (family) {
    case "cannot_do":
      return { kind: "cannot_do", action: ACTIONS.has(detail) ? (detail as Action) : "edit", ...one };
    case "docs":
      return { kind: "docs", topic: intent };
    case "clinic_ready":
    case "explain_threshold":
    case "sens_spec":
    case "why_refused":
    case "monitoring":
      return { kind: family, ...one };
    case "explain_interval":
      return { kind: "explain_interval", ...one, ...(metric ? { metric } : {}) };
    case "build_time":
      // "how long until experiment 13 finishes?" is about that experiment's progress.
      return nums.length || context.experimentId ? status(text, expId, metric) : { kind: "build_time", ...(task ? { task } : {}) };
    case "predict_howto":
      return { kind: "predict_howto", ...one, task };
    case "best_model":
      return { kind: "best_model", metric, task, ...(nums.length >= 2 ? { experimentIds: nums } : {}) };
    case "list_experiments":
      return { kind: "list_experiments", status: statusIn(text), task };
    case "capabilities":
      return { kind: "capabilities" };
    case "explain_metric":
      // "what does the ECE of experiment 42 mean?" asks for that experiment's figure.
      if (metric && nums.length) return status(text, nums[0], metric);
      return metric ? { kind: "explain_metric", metric } : { kind: "not_understood" };
    case "status":
      if (expId) return status(text, expId, metric);
      // Named in words ("my diabetes model") the resolver finds it (index.ts); unnamed, a metric alone asks what it
      // means ("what is this model's AUC?" with no model open), anything else which experiment is meant.
      return metric ? { kind: "explain_metric", metric } : { kind: "which_experiment" };
    default:
      return { kind: "not_understood" };
  }
}

function status(text: string, experimentId: number, metric: string | undefined): Intent {
  return {
    kind: "experiment_status",
    experimentId,
    ...(metric ? { metric } : {}),
    ...(asksForThresholds(text) ? { thresholds: true as const } : {}),
    ...(asksPerClass(text) ? { perClass: true as const } : {}),
  };
}
