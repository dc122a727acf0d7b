import { z } from "zod";
import { addressKey } from "../../auth/address-key.js";
import { ApiError, msg, invalid } from "../../errors.js";
import { defineRoute, type RouteRequest } from "../route.js";
import type { Services } from "../../services.js";

// The pages an administrator's one-time links open, before anyone is signed in: /invite#<token> creates an
// account, /reset-password#<token> sets a new password. The token travels in the JSON body, never in a URL, so it
// is in no access log. Each address may try a limited number per 15 minutes (a token has 256 bits: this is only
// to keep a flood off the password hashing).

const LINK_ATTEMPTS_PER_15_MIN = 30;
const token = z.string().min(1, invalid("validation.link_token_missing")).max(200);

async function throttle(req: RouteRequest & { ip?: string }, services: Services): Promise<void> {
  const decision = await services.auth.limiters.consume("account-link", addressKey(req.ip ?? "unknown"), LINK_ATTEMPTS_PER_15_MIN, 900);
  if (!decision.allowed) throw new ApiError(429, "rate_limit_exceeded", msg("auth.link_attempts", { max: LINK_ATTEMPTS_PER_15_MIN }));
}

const refusals = {
  404: { description: "invitation_invalid / reset_link_invalid: no such link" },
  410: { description: "…_used, …_expired or …_revoked: the link can no longer be used (the message says which)" },
};

export const accountLinkRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/invitations/check",
    auth: "none",
    summary: "The invitation page: whether an invitation link can still be used, for whom and until when",
    tags: ["account"],
    body: z.object({ token }),
    responses: {
      200: {
        description: "usable",
        schema: z.object({ email: z.string().nullable(), role: z.enum(["admin", "member"]), expires_at: z.string() }),
      },
      ...refusals,
    },
    handler: async ({ req, body, services }) => {
      await throttle(req, services);
      const link = await services.admin.checkLink("invitation", body.token);
      return {
        headers: { "cache-control": "no-store" },
        body: { email: link.email, role: link.role as "admin" | "member", expires_at: link.expiresAt.toISOString() },
      };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/invitations/accept",
    auth: "none",
    summary: "Create your account with an invitation link; the link then stops working. Sign in next (POST /v1/session)",
    tags: ["account"],
    body: z.object({ token, email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
    responses: {
      201: {
        description: "the account exists",
        schema: z.object({ user_id: z.string().uuid(), email: z.string(), role: z.enum(["admin", "member"]) }),
      },
      400: { description: "invalid_request: not an email address, or a weak password" },
      409: { description: "email_taken: that address has an account already (the invitation stays usable)" },
      ...refusals,
    },
    handler: async ({ req, body, services }) => {
      await throttle(req, services);
      const user = await services.admin.acceptInvitation(body);
      return { status: 201, headers: { "cache-control": "no-store" }, body: { user_id: user.id, email: user.email, role: user.role } };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/password-resets/check",
    auth: "none",
    summary: "The password-reset page: whether a reset link can still be used, and for which account",
    tags: ["account"],
    body: z.object({ token }),
    responses: {
      200: {
        description: "usable",
        schema: z.object({
          email: z.string(),
          expires_at: z.string(),
          api_keys: z.number().int().describe("the account's working API keys: a new password alone does not stop them"),
        }),
      },
      ...refusals,
    },
    handler: async ({ req, body, services }) => {
      await throttle(req, services);
      const link = await services.admin.checkLink("password_reset", body.token);
      return {
        headers: { "cache-control": "no-store" },
        body: { email: link.userEmail!, expires_at: link.expiresAt.toISOString(), api_keys: link.activeApiKeys ?? 0 },
      };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/password-resets/use",
    auth: "none",
    summary: "Set a new password with a reset link; the link stops working and every session of the account ends",
    tags: ["account"],
    body: z.object({
      token,
      password: z.string().min(1).max(1024),
      revoke_api_keys: z
        .boolean()
        .default(true)
        .describe(
          "revoke every API key of the account too (a new password alone leaves them working); true unless false is sent, since an administrator made the reset link",
        ),
    }),
    responses: {
      200: {
        description: "the password is set; sign in with it",
        schema: z.object({ email: z.string(), api_keys_revoked: z.number().int() }),
      },
      400: { description: "invalid_request: a weak password" },
      ...refusals,
    },
    handler: async ({ req, body, services }) => {
      await throttle(req, services);
      const user = await services.admin.useReset({ token: body.token, password: body.password, revokeApiKeys: body.revoke_api_keys });
      return { headers: { "cache-control": "no-store" }, body: { email: user.email, api_keys_revoked: user.apiKeysRevoked } };
    },
  }),
];
