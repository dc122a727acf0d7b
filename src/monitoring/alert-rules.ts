import { z } from "zod";
import type { MonitoringReport } from "./report.js";

/**
 * A model's alert rules (issue 49 item 6, docs/monitoring.md#alerts) and their judgement over a monitoring report.
 * Pure: the service feeds it the report of the rules' window and the traffic counts; it says which rules are broken,
 * how badly, and the figures that broke them (never a patient's value).
 */

export const ALERT_RULES = ["drift", "unfamiliar_inputs", "sensitivity_below_card", "predictions_stopped", "latency"] as const;
export type AlertRule = (typeof ALERT_RULES)[number];
export type AlertSeverity = "warning" | "critical";

const enabled = z.boolean().describe("false: this rule never opens an alert");
export const alertRulesSchema = z.object({
  window_hours: z
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .describe("the period each evaluation looks back over (hours)"),
  drift: z.object({
    enabled,
    min_severity: z.enum(["medium", "high"]).describe("the drift severity of the worst input column or score that opens an alert"),
  }),
  unfamiliar_inputs: z.object({
    enabled,
    max_rate: z.number().min(0).max(1).describe("an alert when more than this share of checked inputs is unfamiliar"),
    min_predictions: z.number().int().min(1).describe("checked inputs needed in the window before the rate is judged"),
  }),
  sensitivity_below_card: z.object({
    enabled,
    min_positives: z.number().int().min(1).describe("patients with a positive true outcome needed before the sensitivity is judged"),
  }),
  predictions_stopped: z.object({
    enabled,
    quiet_hours: z
      .number()
      .int()
      .min(1)
      .max(24 * 14)
      .describe("no prediction for this many hours..."),
    min_daily_before: z.number().min(1).describe("...after at least this many a day, on average, over the 7 days before"),
  }),
  latency: z.object({
    enabled,
    p95_ms: z.number().min(1).describe("an alert when the 95th percentile of the answer time is above this (ms)"),
    min_predictions: z.number().int().min(1).describe("predictions needed in the window before the latency is judged"),
  }),
});
export type AlertRules = z.infer<typeof alertRulesSchema>;

export const DEFAULT_ALERT_RULES: AlertRules = {
  window_hours: 24,
  drift: { enabled: true, min_severity: "medium" },
  unfamiliar_inputs: { enabled: true, max_rate: 0.05, min_predictions: 50 },
  sensitivity_below_card: { enabled: true, min_positives: 20 },
  predictions_stopped: { enabled: true, quiet_hours: 6, min_daily_before: 20 },
  latency: { enabled: true, p95_ms: 2000, min_predictions: 50 },
};

/** What a caller may send: any part of the rules; the rest keeps its current value. */
export const alertRulesPatchSchema = z
  .object({
    window_hours: alertRulesSchema.shape.window_hours.optional(),
    drift: alertRulesSchema.shape.drift.partial().strict().optional(),
    unfamiliar_inputs: alertRulesSchema.shape.unfamiliar_inputs.partial().strict().optional(),
    sensitivity_below_card: alertRulesSchema.shape.sensitivity_below_card.partial().strict().optional(),
    predictions_stopped: alertRulesSchema.shape.predictions_stopped.partial().strict().optional(),
    latency: alertRulesSchema.shape.latency.partial().strict().optional(),
  })
  .strict();
export type AlertRulesPatch = z.infer<typeof alertRulesPatchSchema>;

/** The stored overrides over the defaults (a stored value that no longer fits is ignored, the default kept). */
export function mergeRules(stored: unknown, patch: AlertRulesPatch = {}): AlertRules {
  const out = structuredClone(DEFAULT_ALERT_RULES) as Record<string, unknown>;
  for (const source of [stored as AlertRulesPatch | null | undefined, patch]) {
    if (!source || typeof source !== "object") continue;
    if (typeof source.window_hours === "number") out.window_hours = source.window_hours;
    for (const r of ALERT_RULES) {
      const part = source[r];
      if (part && typeof part === "object") out[r] = { ...(out[r] as object), ...part };
    }
  }
  const parsed = alertRulesSchema.safeParse(out);
  return parsed.success ? parsed.data : structuredClone(DEFAULT_ALERT_RULES);
}

/** A broken rule: which, how badly, and the figures (numbers and column names only). */
export interface Finding {
  rule: AlertRule;
  severity: AlertSeverity;
  details: Record<string, unknown>;
}

/** Predictions in the quiet period (the last quiet_hours) and in the 7 days before it. */
export interface Traffic {
  quiet: number;
  before: number;
}

export function judgeRules(rules: AlertRules, report: MonitoringReport, traffic: Traffic): Finding[] {
  const found: Finding[] = [];
  const d = report.drift;
  if (rules.drift.enabled && d.status === "drift") {
    const bad = d.features.filter((f) => f.severity === "high" || (rules.drift.min_severity === "medium" && f.severity === "medium"));
    if (bad.length)
      found.push({
        rule: "drift",
        severity: bad.some((f) => f.severity === "high") ? "critical" : "warning",
        details: {
          predictions: report.predictions,
          features: bad
            .slice(0, 10)
            .map((f) => ({ feature: f.feature, severity: f.severity, test: f.test, statistic: f.statistic, psi: f.psi, n: f.n })),
        },
      });
  }
  const u = report.unfamiliar_inputs;
  if (
    rules.unfamiliar_inputs.enabled &&
    u.rate !== null &&
    u.checked >= rules.unfamiliar_inputs.min_predictions &&
    u.rate > rules.unfamiliar_inputs.max_rate
  )
    found.push({
      rule: "unfamiliar_inputs",
      severity: u.rate > 4 * rules.unfamiliar_inputs.max_rate ? "critical" : "warning",
      details: { checked: u.checked, unfamiliar: u.unfamiliar, rate: u.rate, max_rate: rules.unfamiliar_inputs.max_rate },
    });
  const real = report.performance.realized;
  const card = report.performance.model_card.sensitivity;
  if (
    rules.sensitivity_below_card.enabled &&
    card?.value != null &&
    real.positives >= rules.sensitivity_below_card.min_positives &&
    real.sensitivity.ci_high !== null &&
    real.sensitivity.ci_high < card.value
  )
    found.push({
      rule: "sensitivity_below_card",
      severity: "critical",
      details: { realized: real.sensitivity, positives: real.positives, model_card: card },
    });
  const stop = rules.predictions_stopped;
  if (stop.enabled && traffic.quiet === 0 && traffic.before / 7 >= stop.min_daily_before)
    found.push({
      rule: "predictions_stopped",
      severity: "critical",
      details: { quiet_hours: stop.quiet_hours, daily_before: traffic.before / 7 },
    });
  const lat = report.latency_ms;
  // p95_at_most is null past the last latency bin (over 5 s): slower than any threshold worth setting.
  const p95 = lat.p95_at_most ?? (report.predictions ? Number.POSITIVE_INFINITY : null);
  if (rules.latency.enabled && p95 !== null && report.predictions >= rules.latency.min_predictions && p95 > rules.latency.p95_ms)
    found.push({
      rule: "latency",
      severity: p95 > 4 * rules.latency.p95_ms ? "critical" : "warning",
      details: {
        p95_ms_at_most: Number.isFinite(p95) ? p95 : null,
        p95_ms_threshold: rules.latency.p95_ms,
        predictions: report.predictions,
      },
    });
  return found;
}

/**
 * The enabled rules that were judged on enough data over the window and found holding: an open alert of such a rule
 * may close by itself. A rule without enough data to judge (no predictions, too few outcomes) is not "holding":
 * silence does not prove that the problem went away.
 */
export function holdingRules(rules: AlertRules, report: MonitoringReport, traffic: Traffic): AlertRule[] {
  const broken = new Set(judgeRules(rules, report, traffic).map((f) => f.rule));
  const judged: AlertRule[] = [];
  if (rules.drift.enabled && (report.drift.status === "stable" || report.drift.status === "watch")) judged.push("drift");
  else if (rules.drift.enabled && report.drift.status === "drift" && rules.drift.min_severity === "high") judged.push("drift");
  const u = report.unfamiliar_inputs;
  if (rules.unfamiliar_inputs.enabled && u.rate !== null && u.checked >= rules.unfamiliar_inputs.min_predictions)
    judged.push("unfamiliar_inputs");
  const real = report.performance.realized;
  if (
    rules.sensitivity_below_card.enabled &&
    report.performance.model_card.sensitivity?.value != null &&
    real.positives >= rules.sensitivity_below_card.min_positives &&
    real.sensitivity.ci_high !== null
  )
    judged.push("sensitivity_below_card");
  if (rules.predictions_stopped.enabled && traffic.quiet > 0) judged.push("predictions_stopped");
  if (rules.latency.enabled && report.predictions >= rules.latency.min_predictions) judged.push("latency");
  return judged.filter((r) => !broken.has(r));
}
