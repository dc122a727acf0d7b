import { z } from "zod";
import { SESSION_COOKIE } from "../../auth/index.js";
import { ApiError, msg, detail, invalid } from "../../errors.js";
import { actorOf } from "../../audit/audit-log.js";
import { defineRoute } from "../route.js";
import { preferredLanguage } from "../error-language.js";
import { translate } from "../../i18n/index.js";
import { accountErasureSchema } from "../response-schemas.js";

export const meRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/me",
    auth: "any",
    scope: "read",
    summary: "Who am I: the user behind the API key (or dashboard session)",
    tags: ["account"],
    responses: {
      200: {
        description: "the caller",
        schema: z.object({ user_id: z.string().uuid(), email: z.string(), role: z.enum(["admin", "member"]) }),
      },
    },
    handler: async ({ auth }) => ({ body: { user_id: auth.userId, email: auth.email, role: auth.role } }),
  }),
  defineRoute({
    method: "delete",
    path: "/v1/me",
    auth: "any",
    scope: "admin",
    summary:
      "Erase your account, with your password re-entered: every experiment, model, report, dataset, API key, session, chat conversation and log, in the database and the bucket; you are signed out at once, the files go in the background",
    tags: ["account"],
    body: z.object({ password: z.string().min(1, invalid("validation.password_to_confirm")).max(1024) }),
    responses: {
      202: { description: "erasure begun", schema: accountErasureSchema },
      400: { description: "the password is not correct" },
      409: {
        description:
          "last_admin: the last administrator of a server with other users; sole_owner_of_shared_workspace: the only owner of a shared workspace with other members (details.workspaces names them)",
      },
    },
    handler: async ({ req, services, auth, body, res }) => {
      if (!(await services.auth.users.passwordMatches(auth.userId, body.password))) {
        throw new ApiError(400, "invalid_request", msg("auth.wrong_password_nothing_erased"), [
          detail("password", msg("detail.not_correct")),
        ]);
      }
      // Erasing the last administrator would leave the others with no one to manage their accounts.
      if (await services.admin.isLastAdmin(auth.userId, auth.role)) {
        throw new ApiError(409, "last_admin", msg("auth.last_admin_erase"));
      }
      const { experiments } = await services.erasure.begin(actorOf(auth));
      const { maxAge: _maxAge, ...cookie } = services.auth.cookieOptions();
      res.clearCookie(SESSION_COOKIE, cookie);
      return {
        status: 202,
        body: {
          user_id: auth.userId,
          status: "erasing" as const,
          experiments,
          message: translate(preferredLanguage(req.get("accept-language")), "settings:apiNotice.erasing", { count: experiments }),
        },
      };
    },
  }),
];
