import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { errors, msg } from "../../errors.js";
import { experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";
import { preferredLanguage } from "../error-language.js";

// Settings → PACS (docs/pacs.md): the user's DICOMweb server, its credentials (sealed, never shown back), the
// caption of secondary captures, a connection test; and each model's "send every answer back" setting.

const connectionSchema = z.object({
  dicomweb_url: z.string(),
  username: z.string().nullable(),
  has_password: z.boolean().describe("whether a password is kept; it is never shown"),
  caption: z.string().nullable().describe('the warning burned into secondary captures; null: "NOT FOR DIAGNOSIS - research use only"'),
  secondary_capture: z.boolean().describe("answers written back carry a secondary capture besides the structured report"),
  updated_at: z.string(),
});

const autoScoreSchema = z.object({
  enabled: z.boolean(),
  modality: z.string().nullable(),
  body_part: z.string().nullable(),
  series_description: z.string().nullable(),
});

export const pacsRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/pacs",
    auth: "any",
    scope: "read",
    summary: "Your PACS connection (Settings → PACS); the password is never shown",
    tags: ["pacs"],
    responses: {
      200: { description: "the connection, or null when none is configured", schema: z.object({ pacs: connectionSchema.nullable() }) },
    },
    handler: async ({ services, auth }) => ({ body: { pacs: await services.pacs.get(auth.userId) } }),
  }),
  defineRoute({
    method: "put",
    path: "/v1/pacs",
    auth: "any",
    scope: "admin",
    summary:
      "Save your PACS connection: its DICOMweb root, user name and password (HTTP basic; omit the password to keep the one kept, null to remove it)",
    tags: ["pacs"],
    body: z.object({
      dicomweb_url: z.string().min(1).max(2000),
      username: z.string().max(200).nullable().optional(),
      password: z.string().max(1000).nullable().optional(),
      caption: z.string().max(200).nullable().optional(),
      secondary_capture: z.boolean().optional(),
    }),
    responses: { 200: { description: "saved", schema: z.object({ pacs: connectionSchema }) } },
    handler: async ({ services, auth, body }) => {
      const pacs = await services.pacs.save(auth.userId, body);
      await services.audit.record(actorOf(auth), "pacs_configured", "pacs", {
        has_password: pacs.has_password,
        password_changed: body.password !== undefined,
      });
      return { headers: { "cache-control": "no-store" }, body: { pacs } };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/pacs",
    auth: "any",
    scope: "admin",
    summary: "Forget your PACS connection and its credentials",
    tags: ["pacs"],
    responses: { 204: { description: "removed" }, 404: { description: "none was configured" } },
    handler: async ({ services, auth }) => {
      if (!(await services.pacs.remove(auth.userId))) throw errors.notFound(msg("pacs.no_connection"));
      await services.audit.record(actorOf(auth), "pacs_removed", "pacs");
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/pacs/test",
    auth: "any",
    scope: "admin",
    summary: "Test connection: one QIDO-RS search on your PACS with its credentials; says what went wrong",
    tags: ["pacs"],
    responses: {
      200: {
        description: "the outcome (ok false with the reason when the PACS refused or could not be reached)",
        schema: z.object({ ok: z.boolean(), status: z.number().nullable(), message: z.string() }),
      },
      404: { description: "no PACS is configured" },
    },
    handler: async ({ services, auth }) => ({ body: await services.pacs.test(auth.userId) }),
  }),
  defineRoute({
    method: "put",
    path: "/v1/models/{experiment_id}/pacs",
    auth: "any",
    scope: "build",
    summary: "Whether every prediction of this model on a DICOMweb link of your PACS writes its answer back there (docs/pacs.md)",
    tags: ["pacs"],
    params: experimentIdParams,
    body: z.object({ send_back: z.boolean() }),
    responses: { 200: { description: "saved", schema: z.object({ send_back: z.boolean() }) }, 404: { description: "no such experiment" } },
    handler: async ({ services, auth, params, body }) => {
      if (!(await services.pacs.setSendBack(auth, params.experiment_id, body.send_back)))
        throw errors.notFound(msg("experiment.not_found", { id: params.experiment_id }));
      await services.audit.record(actorOf(auth), "pacs_send_back_set", `experiment ${params.experiment_id}`, { send_back: body.send_back });
      return { body: { send_back: body.send_back } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/pacs",
    auth: "any",
    scope: "read",
    summary: "This model's send-back setting",
    tags: ["pacs"],
    params: experimentIdParams,
    responses: {
      200: { description: "the setting", schema: z.object({ send_back: z.boolean() }) },
      404: { description: "no such experiment" },
    },
    handler: async ({ services, auth, params }) => {
      const on = await services.pacs.sendBack(auth.workspace.id, params.experiment_id);
      if (on === null) throw errors.notFound(msg("experiment.not_found", { id: params.experiment_id }));
      return { body: { send_back: on } };
    },
  }),
  defineRoute({
    method: "put",
    path: "/v1/models/{experiment_id}/pacs/auto-score",
    auth: "any",
    scope: "build",
    summary:
      "This model's rule for scoring new PACS instances as they arrive (Orthanc's change feed): each one matching modality, body part and series description (omitted or null: any) is scored and its SR written back",
    tags: ["pacs"],
    params: experimentIdParams,
    body: z.object({
      enabled: z.boolean(),
      modality: z.string().max(16).nullable().optional(),
      body_part: z.string().max(64).nullable().optional(),
      series_description: z.string().max(64).nullable().optional(),
    }),
    responses: {
      200: { description: "saved", schema: autoScoreSchema },
      404: { description: "no such experiment" },
      409: { description: "pacs_auto_score_unavailable: no PACS configured, or it gives no change feed (not Orthanc)" },
    },
    handler: async ({ services, auth, params, body }) => {
      const rule = await services.pacsAutoScore.setRule(auth.userId, params.experiment_id, {
        enabled: body.enabled,
        modality: body.modality ?? null,
        body_part: body.body_part ?? null,
        series_description: body.series_description ?? null,
      });
      await services.audit.record(actorOf(auth), "pacs_auto_score_set", `experiment ${params.experiment_id}`, { ...rule });
      return { body: rule };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/pacs/auto-score",
    auth: "any",
    scope: "read",
    summary: "This model's rule for scoring new PACS instances, and its last outcomes (failures with their reason)",
    tags: ["pacs"],
    params: experimentIdParams,
    responses: {
      200: {
        description: "the rule and the last 50 instances scored, newest first",
        schema: autoScoreSchema.extend({
          recent: z.array(
            z.object({
              sop_instance_uid: z.string(),
              outcome: z.enum(["sent", "failed"]),
              reason: z.string().nullable(),
              sr_instance_uid: z.string().nullable(),
              at: z.string(),
            }),
          ),
        }),
      },
      404: { description: "no such experiment" },
    },
    handler: async ({ services, auth, params, req }) => ({
      body: {
        ...(await services.pacsAutoScore.getRule(auth.userId, params.experiment_id)),
        recent: await services.pacsAutoScore.outcomes(auth.userId, params.experiment_id, 50, preferredLanguage(req.get("accept-language"))),
      },
    }),
  }),
];
