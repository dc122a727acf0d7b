import { z } from "zod";
import { alertRulesPatchSchema, alertRulesSchema } from "../../monitoring/alert-rules.js";
import { experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";
import { invalid } from "../../errors.js";

// A model's monitoring alerts (issue 49 item 6, docs/monitoring.md#alerts): the rules, where alerts go, and the
// alerts themselves, acknowledged or resolved with a comment. The logic is in src/monitoring/alerts.ts.

export const alertSchema = z.object({
  id: z.string(),
  experiment_id: z.number(),
  model_version: z.number().nullable().describe("the model version served when the alert was opened"),
  rule: z.enum(["drift", "unfamiliar_inputs", "sensitivity_below_card", "predictions_stopped", "latency"]),
  severity: z.enum(["warning", "critical"]),
  state: z.enum(["open", "acknowledged", "resolved"]),
  opened_at: z.string(),
  updated_at: z.string(),
  acknowledged_at: z.string().nullable(),
  resolved_at: z.string().nullable(),
  comment: z.string().nullable().describe("what the person who acknowledged or resolved it wrote last"),
  acknowledged_by: z.string().nullable().describe("the e-mail of who acknowledged it; null when nobody did"),
  resolved_by: z.string().nullable().describe("the e-mail of who resolved it; null when it is open, or Builder resolved it"),
  resolved_automatically: z
    .boolean()
    .describe("true: Builder resolved it because its rule held over a whole evaluation window after it opened"),
  summary: z.object({ en: z.string(), es: z.string() }).describe("the alert in plain words, English and Spanish"),
  details: z.record(z.string(), z.unknown()).describe("the figures that broke the rule (numbers and column names, no patient data)"),
  deliveries: z.array(
    z.object({
      event: z.enum(["opened", "resolved"]).describe("opened: the alert's notice; resolved: the notice that it resolved by itself"),
      channel: z.enum(["webhook", "email"]),
      target: z.string(),
      state: z.enum(["pending", "delivered", "failed"]),
      attempts: z.number(),
      last_status: z.number().nullable(),
      delivered_at: z.string().nullable(),
    }),
  ),
});

const settingsSchema = z.object({
  rules: alertRulesSchema,
  webhook_url: z.string().nullable(),
  email_to: z.array(z.string()),
  delivery: z.object({
    webhook_signing: z.boolean().describe("false: CALLBACK_SECRET is not set on the server, so no webhook can be signed"),
    email: z.boolean().describe("false: SMTP_HOST is not set on the server"),
  }),
});

const alertParams = experimentIdParams.extend({ alert_id: z.uuid(invalid("validation.alert_id")) });
const comment = z
  .string()
  .trim()
  .max(2000, invalid("validation.at_most_chars_short", { max: 2000 }));

export const monitoringAlertRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/alerts",
    auth: "any",
    scope: "read",
    summary: "The model's monitoring alerts, those not yet resolved first, newest first (at most 200)",
    tags: ["monitoring"],
    params: experimentIdParams,
    query: z.object({ state: z.enum(["open", "acknowledged", "resolved"]).optional() }),
    responses: { 200: { description: "the alerts", schema: z.object({ data: z.array(alertSchema) }) } },
    handler: async ({ services, auth, params, query }) => ({
      body: { data: await services.monitoring.alerts.list(auth, params.experiment_id, query.state) },
    }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/alerts/{alert_id}/acknowledge",
    auth: "any",
    scope: "build",
    summary: "Acknowledge an open alert (someone is looking at it): it stays open for this rule, so no new alert opens for it",
    tags: ["monitoring"],
    params: alertParams,
    body: z.object({ comment: comment.optional() }),
    responses: {
      200: { description: "the alert, acknowledged", schema: alertSchema },
      409: { description: "the alert is not open (alert_state_conflict)" },
    },
    handler: async ({ services, auth, params, body }) => ({
      body: await services.monitoring.alerts.act(auth, params.experiment_id, params.alert_id, "acknowledged", body.comment),
    }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/models/{experiment_id}/alerts/{alert_id}/resolve",
    auth: "any",
    scope: "build",
    summary: "Resolve an alert with a comment (what was found, what was done); the rule may open a new alert after one more window",
    tags: ["monitoring"],
    params: alertParams,
    body: z.object({ comment: comment.min(1, invalid("validation.say_what_was_found")) }),
    responses: {
      200: { description: "the alert, resolved", schema: alertSchema },
      409: { description: "the alert is already resolved (alert_state_conflict)" },
    },
    handler: async ({ services, auth, params, body }) => ({
      body: await services.monitoring.alerts.act(auth, params.experiment_id, params.alert_id, "resolved", body.comment),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/alert-rules",
    auth: "any",
    scope: "read",
    summary: "The model's alert rules (the defaults where none was changed) and where its alerts are sent",
    tags: ["monitoring"],
    params: experimentIdParams,
    responses: { 200: { description: "the rules and destinations", schema: settingsSchema } },
    handler: async ({ services, auth, params }) => ({ body: await services.monitoring.alerts.settings(auth, params.experiment_id) }),
  }),
  defineRoute({
    method: "put",
    path: "/v1/models/{experiment_id}/alert-rules",
    auth: "any",
    scope: "build",
    summary:
      "Change part of the model's alert rules and where its alerts go: a signed webhook (needs CALLBACK_SECRET on the server) and e-mail addresses (need SMTP_HOST); null or [] stops a channel",
    tags: ["monitoring"],
    params: experimentIdParams,
    body: z
      .object({
        rules: alertRulesPatchSchema.optional(),
        webhook_url: z
          .url({ protocol: /^https?$/, error: invalid("validation.http_url") })
          .max(2000)
          .nullable()
          .optional(),
        email_to: z
          .array(z.email(invalid("validation.email")))
          .max(20, invalid("validation.at_most_addresses", { max: 20 }))
          .optional(),
      })
      .strict(),
    responses: { 200: { description: "the rules and destinations now", schema: settingsSchema } },
    handler: async ({ services, auth, params, body }) => ({
      body: await services.monitoring.alerts.saveSettings(auth, params.experiment_id, body),
    }),
  }),
];
