import { z } from "zod";
import { SESSION_COOKIE } from "../../auth/index.js";
import { ApiError, msg } from "../../errors.js";
import { defineRoute } from "../route.js";

const sessionBody = z.object({
  user_id: z.string().uuid(),
  email: z.string(),
  role: z.enum(["admin", "member"]).describe("admin: may manage users (Settings → Users, /v1/admin)"),
  csrf_token: z.string().describe("send it back in the x-csrf-token header on POST/PUT/PATCH/DELETE"),
  expires_at: z.string().describe("ISO 8601"),
});

/** The body of both session routes; never cached, since it carries the CSRF token. */
function sessionResponse(session: { userId: string; email: string; role: "admin" | "member"; csrfToken: string; expiresAt: Date }) {
  return {
    headers: { "cache-control": "no-store" },
    body: {
      user_id: session.userId,
      email: session.email,
      role: session.role,
      csrf_token: session.csrfToken,
      expires_at: session.expiresAt.toISOString(),
    },
  };
}

export const sessionRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/session",
    auth: "none",
    summary: "Sign in to the dashboard: sets the builder_session cookie (httpOnly, SameSite=Lax)",
    tags: ["account"],
    body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
    responses: {
      200: { description: "signed in; the cookie is set", schema: sessionBody },
      401: { description: "invalid_credentials" },
      429: { description: "rate_limit_exceeded: too many attempts for this email or address (Retry-After)" },
    },
    handler: async ({ req, res, body, services }) => {
      const session = await services.auth.signIn({ email: body.email, password: body.password, ip: req.ip ?? "unknown" });
      res.cookie(SESSION_COOKIE, session.token, services.auth.cookieOptions());
      await services.audit.record({ userId: session.userId, via: "session" }, "sign_in");
      return sessionResponse(session);
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/session",
    auth: "session",
    summary: "The current dashboard session (and its CSRF token)",
    tags: ["account"],
    responses: { 200: { description: "the session", schema: sessionBody } },
    handler: async ({ auth, services }) => {
      const session = await services.auth.sessions.byId(auth.sessionId!);
      if (!session) throw new ApiError(401, "invalid_session", msg("auth.invalid_session"));
      return sessionResponse(session);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/session",
    auth: "session",
    summary: "Sign out: ends the session and clears the cookie (needs x-csrf-token)",
    tags: ["account"],
    responses: { 204: { description: "signed out" } },
    handler: async ({ res, auth, services }) => {
      await services.auth.sessions.delete(auth.sessionId!);
      const { maxAge: _maxAge, ...opts } = services.auth.cookieOptions();
      res.clearCookie(SESSION_COOKIE, opts);
      return { status: 204 };
    },
  }),
];
