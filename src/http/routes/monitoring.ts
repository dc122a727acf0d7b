import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { ApiError, msg, detail, invalid } from "../../errors.js";
import { MAX_OUTCOMES } from "../../monitoring/outcomes.js";
import { experimentIdParams as params } from "../params.js";
import { defineRoute } from "../route.js";
import { alertSchema } from "./monitoring-alerts.js";

// Monitoring of a deployed model (issue 49, docs/monitoring.md): what it has been asked and answered, drift
// against its baseline, and true outcomes joined to earlier predictions by their x-request-id.

const num = z.number().nullable();
const interval = z.object({ value: num, ci_low: num, ci_high: num });
const DAY_MS = 86_400_000;
/** A period longer than this is refused: the report reads hourly rows and up to 100,000 records. */
const MAX_PERIOD_DAYS = 400;

const featureSchema = z.object({
  feature: z.string(),
  kind: z
    .enum(["column", "descriptor", "features", "score"])
    .describe(
      "descriptor: an image descriptor (img:width, img:mean, img:modality, ...); features: a component of the image model's feature summary (img:feature:1..k)",
    ),
  type: z.enum(["numeric", "categorical"]),
  n: z.number().describe("predictions in the period with a value: the sample the test saw"),
  baseline_n: z.number(),
  test: z
    .enum(["ks", "chi2", "psi", "jensen_shannon"])
    .nullable()
    .describe("under 1,000 predictions ks or chi2 (p < 0.05), from 1,000 psi or jensen_shannon (>= 0.1)"),
  statistic: num,
  p_value: num,
  psi: num,
  drifted: z.boolean(),
  severity: z.enum(["not_enough_data", "none", "low", "medium", "high"]),
  missing_rate: num.optional(),
  baseline_missing_rate: z.number().optional(),
});

const realizedSchema = z.object({
  n: z.number(),
  positives: z.number(),
  sensitivity: interval,
  specificity: interval,
  ppv: interval,
  npv: interval,
  auc: interval,
  accuracy: interval,
});

export const monitoringReportSchema = z.object({
  experiment_id: z.number(),
  model_version: z.number(),
  from: z.string(),
  to: z.string(),
  predictions: z.number(),
  per_hour: z.array(
    z.object({ hour: z.string(), predictions: z.number(), positive_rate: num, latency_ms_mean: num, versions: z.array(z.number()) }),
  ),
  latency_ms: z.object({ mean: num, p50_at_most: num, p95_at_most: num }),
  decisions: z.object({ positive_class: z.string().nullable(), positive_rate: num, baseline_positive_rate: num }),
  score_distribution: z.object({ edges: z.array(z.number()), window: z.array(z.number()), baseline: z.array(z.number()) }),
  drift: z.object({
    status: z
      .enum(["no_baseline", "not_enough_data", "stable", "watch", "drift", "unchecked"])
      .describe("unchecked: drift is not judged for this kind of model (detection); reason says why"),
    severity: z.string(),
    reason: z.string().nullable().describe("why drift is unchecked or has no baseline, in plain words; null otherwise"),
    features: z.array(featureSchema),
    baseline_n: z.number(),
    baseline_source: z.string().nullable(),
  }),
  unfamiliar_inputs: z
    .object({
      checked: z.number().describe("answered inputs the unfamiliar-input check looked at (refused ones are not counted)"),
      unfamiliar: z.number(),
      unchecked: z.number().describe("answers of a model without the check (built before it, or detection)"),
      rate: num.describe("unfamiliar / checked"),
    })
    .describe("the unfamiliar-input check's findings in the period"),
  outcomes: z.object({ records: z.number(), records_read_at_most: z.number(), labelled: z.number(), coverage: num }),
  performance: z.object({
    realized: realizedSchema,
    estimated: z.object({
      estimate: z.literal(true),
      method: z.string(),
      n: z.number(),
      sensitivity: num,
      specificity: num,
      ppv: num,
      npv: num,
      accuracy: num,
    }),
    model_card: z.object({
      source: z.string(),
      sensitivity: interval.nullable(),
      specificity: interval.nullable(),
      ppv: interval.nullable(),
      npv: interval.nullable(),
      auc: interval.nullable(),
      accuracy: interval.nullable(),
    }),
  }),
  retention_days: z.number(),
  alerts: z
    .object({ open: z.number().describe("alerts not yet resolved"), items: z.array(alertSchema) })
    .describe("alerts not yet resolved, and those opened in the period (GET /v1/models/{experiment_id}/alerts lists all)"),
});

const outcomeRow = z.object({
  request_id: z
    .string()
    .min(1, invalid("validation.not_empty"))
    .max(128, invalid("validation.at_most_chars_short", { max: 128 })),
  label: z.union([z.string().min(1), z.number(), z.boolean()], { error: invalid("validation.label_as_in_csv") }),
});

export const monitoringRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/monitoring",
    auth: "any",
    scope: "read",
    summary:
      "Monitoring of a model over a period: volume, latency, score against the baseline, positive-decision rate, drift per input column and score, outcome coverage, realized figures with intervals beside the model card's, and the estimate for predictions without an outcome",
    tags: ["monitoring"],
    params,
    query: z.object({
      from: z.iso
        .datetime({ offset: true, error: invalid("validation.iso_datetime") })
        .optional()
        .describe("start of the period (default: 30 days before `to`)"),
      to: z.iso
        .datetime({ offset: true, error: invalid("validation.iso_datetime") })
        .optional()
        .describe("end of the period, exclusive (default: now)"),
    }),
    responses: { 200: { description: "the model's monitoring for the period", schema: monitoringReportSchema } },
    handler: async ({ services, auth, params, query }) => {
      const to = query.to ? new Date(query.to) : new Date();
      const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
      if (!(from < to))
        throw new ApiError(400, "invalid_request", msg("monitoring.from_after_to"), [detail("from", msg("monitoring.from_before_to"))]);
      if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * DAY_MS)
        throw new ApiError(400, "invalid_request", msg("monitoring.period_too_long", { max: MAX_PERIOD_DAYS }), [
          detail("from", msg("monitoring.at_most_days", { max: MAX_PERIOD_DAYS })),
        ]);
      return { body: await services.monitoring.report(auth, params.experiment_id, from, to) };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/outcomes",
    auth: "any",
    scope: "build",
    summary: `True outcomes of earlier predictions, joined by their x-request-id (at most ${MAX_OUTCOMES} per call; the same outcome again changes nothing)`,
    tags: ["monitoring"],
    params,
    body: z
      .array(outcomeRow)
      .min(1, invalid("validation.at_least_one_outcome"))
      .max(MAX_OUTCOMES, invalid("validation.at_most_outcomes", { max: MAX_OUTCOMES })),
    responses: {
      200: {
        description:
          "how many were matched to a prediction record; unmatched: request ids with no record (never made, another model's, or purged)",
        schema: z.object({ received: z.number(), matched: z.number(), unmatched: z.array(z.string()) }),
      },
    },
    handler: async ({ services, auth, params, body }) => {
      const result = await services.monitoring.postOutcomes(auth, params.experiment_id, body);
      await services.audit.record(actorOf(auth), "outcomes_posted", `experiment ${params.experiment_id}`, {
        received: result.received,
        matched: result.matched,
      });
      return { body: result };
    },
  }),
];
