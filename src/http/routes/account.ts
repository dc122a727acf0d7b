import { z } from "zod";
import { SETUP_ATTEMPTS_PER_15_MIN } from "../../auth/first-run.js";
import { addressKey } from "../../auth/address-key.js";
import { actorOf } from "../../audit/audit-log.js";
import { ApiError, msg } from "../../errors.js";
import { defineRoute } from "../route.js";

// The dashboard's account pages: what the sign-in page needs before anyone is signed in (first run, sign-up),
// the optional self-service sign-up, and changing one's password.

const SIGNUPS_PER_HOUR_PER_ADDRESS = 10;
export const SIGNUP_ACCEPTED =
  "If this address could be used, its account is ready: sign in with it and the password you chose. If sign-in fails, the address may already have an account: sign in with its password, or ask your administrator.";

export const accountRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/setup",
    auth: "none",
    summary:
      "What the sign-in page shows before sign-in: whether any user exists yet, whether an administrator does (else the setup page), and whether sign-up is open",
    tags: ["account"],
    responses: {
      200: {
        description: "setup state",
        schema: z.object({
          users_exist: z
            .boolean()
            .describe(
              "false on a fresh install: create the first user here with the setup code from the server's log (POST /v1/setup), or with ./builder users create",
            ),
          admin_exists: z
            .boolean()
            .describe(
              "false on a fresh install, and after the last administrator was erased: the server has printed a setup code in its log, and POST /v1/setup makes an administrator with it",
            ),
          signup_enabled: z.boolean().describe("SIGNUP_ENABLED: anyone who reaches the dashboard may create an account"),
        }),
      },
    },
    handler: async ({ services }) => {
      // Without an administrator (the last one erased since start-up), this prints a new setup code for the operator,
      // whom the page then asks for it; the code itself never travels over HTTP.
      await services.auth.firstRun.ensureCode();
      return {
        headers: { "cache-control": "no-store" },
        body: {
          users_exist: await services.auth.account.anyUser(),
          admin_exists: await services.auth.firstRun.adminExists(),
          signup_enabled: services.config.SIGNUP_ENABLED,
        },
      };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/setup",
    auth: "none",
    summary: "First run: create the administrator with the setup code the server printed in its log; refused once an administrator exists",
    tags: ["account"],
    body: z.object({
      setup_code: z
        .string()
        .min(1)
        .max(64)
        .describe("printed by ./builder serve while no administrator exists (e.g. 7K2M-XQ4P-9TND-3HBR); it works for SETUP_CODE_TTL_HOURS"),
      email: z.string().min(1).max(320),
      password: z.string().min(1).max(1024),
    }),
    responses: {
      201: {
        description: "the first account exists; sign in next (POST /v1/session)",
        schema: z.object({ user_id: z.string().uuid(), email: z.string() }),
      },
      400: { description: "invalid_request: not an email address, or a weak password" },
      403: { description: "invalid_setup_code: not the code in this server's log; setup_code_expired: restart the server for a new one" },
      409: { description: "setup_done: an administrator exists already; email_taken: a user has that address" },
      429: { description: "rate_limit_exceeded: too many attempts from this address" },
    },
    handler: async ({ req, body, services }) => {
      const decision = await services.auth.limiters.consume("setup", addressKey(req.ip ?? "unknown"), SETUP_ATTEMPTS_PER_15_MIN, 900);
      if (!decision.allowed) throw new ApiError(429, "rate_limit_exceeded", msg("auth.setup_attempts", { max: SETUP_ATTEMPTS_PER_15_MIN }));
      const user = await services.auth.firstRun.createFirstUser({ setupCode: body.setup_code, email: body.email, password: body.password });
      req.log.info({ user_id: user.id }, "first run: an administrator was created from the setup page");
      await services.audit.record({ userId: user.id, via: "session" }, "first_account_created");
      return { status: 201, headers: { "cache-control": "no-store" }, body: { user_id: user.id, email: user.email } };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/users",
    auth: "none",
    summary:
      "Sign up (only when SIGNUP_ENABLED=true): creates the account unless the address has one; the same answer either way, then sign in",
    tags: ["account"],
    body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
    responses: {
      202: {
        description:
          "accepted: the same answer whether the address was free (the account now exists) or already had an account; sign in next (POST /v1/session)",
        schema: z.object({
          status: z.literal("accepted"),
          message: z.string().describe("what to do next: sign in with this address and password"),
        }),
      },
      400: { description: "invalid_request: not an email address, or a weak password" },
      403: {
        description:
          "signup_disabled: the operator creates users (./builder users create); signup_needs_admin: the server has no administrator yet (its first account is made with the setup code)",
      },
    },
    handler: async ({ req, body, services }) => {
      if (!services.config.SIGNUP_ENABLED) {
        throw new ApiError(403, "signup_disabled", msg("auth.signup_disabled"));
      }
      // The first account of a server is its administrator, made with the setup code (issue 48 finding 12): a stranger
      // signing up first would otherwise hold the only account of a server that has no one to manage it.
      if (!(await services.auth.firstRun.adminExists())) {
        throw new ApiError(403, "signup_needs_admin", msg("auth.signup_needs_admin"));
      }
      const decision = await services.auth.limiters.consume("signup", addressKey(req.ip ?? "unknown"), SIGNUPS_PER_HOUR_PER_ADDRESS, 3600);
      if (!decision.allowed)
        throw new ApiError(429, "rate_limit_exceeded", msg("auth.signup_attempts", { max: SIGNUPS_PER_HOUR_PER_ADDRESS }));
      // No 409 email_taken and no session here: either would tell whoever asks which addresses have accounts
      // (issue 42, finding 12a). Builder sends no email, so there is no "check your inbox" step to hide behind:
      // the caller signs in next, which succeeds only for the password that owns the address.
      const created = await services.auth.users.createIfFree(body);
      req.log.info({ created }, created ? "sign-up: account created" : "sign-up for an address that already has an account");
      return { status: 202, headers: { "cache-control": "no-store" }, body: { status: "accepted" as const, message: SIGNUP_ACCEPTED } };
    },
  }),
  defineRoute({
    method: "put",
    path: "/v1/account/password",
    auth: "session",
    summary:
      "Change your password (dashboard session + x-csrf-token); your other sessions are signed out, your API keys keep working unless revoke_api_keys",
    tags: ["account"],
    body: z.object({
      current_password: z.string().min(1).max(1024),
      new_password: z.string().min(1).max(1024),
      revoke_api_keys: z
        .boolean()
        .default(false)
        .describe("revoke every API key of yours too: a new password alone leaves them working (the page offers it, unticked)"),
    }),
    responses: { 204: { description: "changed" }, 400: { description: "invalid_request: wrong current password or a weak new one" } },
    handler: async ({ auth, body, services }) => {
      await services.auth.account.changePassword({
        userId: auth.userId,
        sessionId: auth.sessionId,
        current: body.current_password,
        next: body.new_password,
      });
      // A new password does not stop API keys (issue 48 finding 13): revoked only when asked, and the log says which.
      const keys = services.auth.apiKeys;
      const details = body.revoke_api_keys
        ? { api_keys_revoked: await keys.revokeAllOf(auth.userId) }
        : { api_keys_kept: await keys.countActive(auth.userId) };
      await services.audit.record(actorOf(auth), "password_changed", undefined, details);
      return { status: 204 };
    },
  }),
];
