import { z } from "zod";
import type { ApiKeyInfo, ApiKeyListed } from "../../auth/api-key.service.js";
import { KEY_SCOPES } from "../../auth/key-scopes.js";
import { actorOf } from "../../audit/audit-log.js";
import { defineRoute } from "../route.js";

// Key management for the dashboard (cookie session + CSRF). API keys cannot mint or revoke keys:
// a leaked key must not be able to entrench itself.

const apiKeySchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  prefix: z.string().describe("the first 12 characters of the key, to recognise it"),
  created_at: z.string(),
  last_used_at: z.string().nullable().describe("updated at most once a minute"),
  revoked_at: z.string().nullable(),
  rate_limit_per_minute: z.number().int().nullable().describe("null: the server default (RATE_LIMIT_PER_MINUTE)"),
  scopes: z
    .array(z.enum(KEY_SCOPES))
    .nullable()
    .describe("what the key may do (docs/teams.md, Key scopes); null: a key made before scopes, which keeps full access"),
  legacy_full_access: z.boolean().describe("true: made before scopes, so it may do everything; replace it with a scoped key"),
  model_ids: z.array(z.number().int()).nullable().describe("the experiments a predict key may call; null: every model"),
  expires_at: z.string().nullable().describe("when the key stops working (401 api_key_expired); null: never"),
  expired: z.boolean(),
});

/** A key as the list shows it: who made it, besides the key itself. */
const listedKeySchema = apiKeySchema.extend({
  created_by: z
    .string()
    .nullable()
    .describe("the e-mail of who made the key; null when they no longer belong to the workspace (a former member)"),
  created_by_former_member: z
    .boolean()
    .describe("the maker left the workspace or was removed from it (their keys there were revoked then)"),
  made_by_you: z.boolean(),
});

function toJson(k: ApiKeyInfo, now = Date.now()): z.infer<typeof apiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
    rate_limit_per_minute: k.rateLimitPerMinute,
    scopes: k.scopes,
    legacy_full_access: k.scopes === null,
    model_ids: k.modelIds?.map(Number) ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
    expired: k.expiresAt !== null && k.expiresAt.getTime() <= now,
  };
}

function toListedJson(k: ApiKeyListed, callerId: string): z.infer<typeof listedKeySchema> {
  return { ...toJson(k), created_by: k.createdByEmail, created_by_former_member: k.makerFormerMember, made_by_you: k.userId === callerId };
}

export const apiKeyRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/api-keys",
    auth: "session",
    summary: "Create an API key (scope predict unless others are asked for); the secret is in this response only",
    tags: ["account"],
    body: z.object({
      name: z.string().trim().min(1).max(100),
      rate_limit_per_minute: z.number().int().min(1).max(1_000_000).optional(),
      scopes: z
        .array(z.enum(KEY_SCOPES))
        .min(1)
        .optional()
        .describe('what the key may do; default ["predict"] (read < build < admin; predict apart)'),
      model_ids: z
        .array(z.number().int().positive())
        .max(1000)
        .optional()
        .describe("only these experiments' models may be called with predict; absent or empty: every model"),
      expires_at: z.iso
        .datetime({ offset: true })
        .optional()
        .describe("when the key stops working (ISO 8601, in the future); absent: never"),
    }),
    responses: {
      201: { description: "created; store `key` now, it is never shown again", schema: apiKeySchema.extend({ key: z.string() }) },
    },
    handler: async ({ auth, body, services }) => {
      const { key, info } = await services.auth.apiKeys.create(auth.userId, {
        workspace: auth.workspace,
        name: body.name,
        rateLimitPerMinute: body.rate_limit_per_minute,
        scopes: body.scopes,
        modelIds: body.model_ids,
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
      });
      await services.audit.record(actorOf(auth), "api_key_created", `key ${info.prefix}`, {
        api_key_id: info.id,
        scopes: info.scopes,
        model_ids: info.modelIds,
        expires_at: info.expiresAt?.toISOString() ?? null,
      });
      return { status: 201, headers: { "cache-control": "no-store" }, body: { ...toJson(info), key } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/api-keys",
    auth: "session",
    summary:
      "List the API keys of the current workspace (never the secrets), newest first, revoked ones included: an owner's every member's, anyone else's their own",
    tags: ["account"],
    responses: {
      200: {
        description: "the keys the caller may see",
        schema: z.object({
          data: z.array(listedKeySchema),
          every_member: z
            .boolean()
            .describe("true: every member's keys of the workspace (an owner: key.manage); false: only the caller's own"),
          default_rate_limit_per_minute: z
            .number()
            .int()
            .describe("the limit of a key whose rate_limit_per_minute is null (RATE_LIMIT_PER_MINUTE)"),
        }),
      },
    },
    handler: async ({ auth, services }) => {
      const { keys, everyMember } = await services.auth.apiKeys.listFor(auth);
      return {
        body: {
          data: keys.map((k) => toListedJson(k, auth.userId)),
          every_member: everyMember,
          default_rate_limit_per_minute: services.config.RATE_LIMIT_PER_MINUTE,
        },
      };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/api-keys/{id}",
    auth: "session",
    summary: "Revoke one of your API keys, or (an owner: key.manage) any key of the current workspace; refused from its very next request",
    tags: ["account"],
    params: z.object({ id: z.string().min(1).max(200) }),
    responses: {
      200: { description: "the revoked key", schema: apiKeySchema },
      403: { description: "missing_permission_key_manage: another member's key, and the caller's role may not manage keys" },
    },
    handler: async ({ auth, params, services }) => {
      const { info, madeBy } = await services.auth.apiKeys.revokeFor(params.id, auth);
      // Who revoked whose key: the actor is the revoker; made_by names the maker (ids only, as every entry).
      await services.audit.record(actorOf(auth), "api_key_revoked", `key ${info.prefix}`, {
        api_key_id: info.id,
        made_by: madeBy,
        ...(madeBy !== auth.userId ? { revoked_for_another_member: true } : {}),
      });
      return { body: toJson(info) };
    },
  }),
];
