import type { Config } from "../config.js";
import type { Database, Db } from "../db/client.js";
import { ApiError, msg } from "../errors.js";
import type { Authenticate, AuthInfo, AuthRequest, AuthResponse } from "./types.js";
import type { Logger } from "../logger.js";
import { AccountService } from "./account.service.js";
import { directOps } from "./admin-ops.js";
import { FirstRunSetup } from "./first-run.js";
import { adminSocketPath, startAdminSocket } from "./admin-socket.js";
import { ApiKeyService } from "./api-key.service.js";
import { AdminRepository } from "./admin.repository.js";
import { AuditLog } from "../audit/audit-log.js";
import { createLimiters, rateLimitHeaders, retryAfterSeconds, type Limiters } from "./rate-limit.js";
import { safeEqual } from "./secrets.js";
import { readCookie, SESSION_COOKIE, SessionService, type SessionInfo } from "./session.service.js";
import { signIn } from "./signin.js";
import { UserService } from "./user.service.js";
import { WorkspaceRepository } from "../workspaces/workspace.repository.js";
import { workspaceNotFound } from "../workspaces/scope.js";

export { ApiKeyService } from "./api-key.service.js";
export { SESSION_COOKIE, SessionService } from "./session.service.js";
export { UserService } from "./user.service.js";
export type { Authenticate, AuthInfo, AuthMode, RequestWorkspace } from "./types.js";

export interface Auth {
  users: UserService;
  /** Users' roles and states, invitations and reset links, as the administrators' service reads and writes them. */
  admins: AdminRepository;
  apiKeys: ApiKeyService;
  sessions: SessionService;
  /** First-run detection and password changes (the dashboard's Settings → Account). */
  account: AccountService;
  /** The administrator of a server without one (a fresh install), made in the browser with the setup code this process prints. */
  firstRun: FirstRunSetup;
  limiters: Limiters;
  /** Resolves the caller for a route's auth mode, or throws the ApiError (401/403/429) that refuses it. */
  authenticate: Authenticate;
  /** Throttled email + password check; opens a session (the caller sets the cookie). */
  signIn(input: { email: string; password: string; ip: string }): Promise<SessionInfo & { token: string }>;
  /** Cookie attributes for the session cookie (Secure from COOKIE_SECURE, default on in production). */
  cookieOptions(): { httpOnly: true; secure: boolean; sameSite: "lax"; path: "/"; maxAge: number };
  close(): Promise<void>;
}

/** The channel migration 0001's trigger announces API-key changes on. */
export const API_KEY_CHANNEL = "builder_api_key_changed";
/** The header a dashboard request names its workspace in (absent: the user's personal workspace). */
export const WORKSPACE_HEADER = "x-builder-workspace";
/**
 * The same choice as a cookie, for what a page cannot add a header to: an EventSource (an experiment's and a batch's
 * live events) and plain links (a report, results.csv, a figure). The header wins when both are there. It only
 * names a workspace; membership is checked as for the header, so a forged one gets 404 workspace_not_found.
 */
export const WORKSPACE_COOKIE = "builder_workspace";
const BEARER = /^Bearer\s+(\S+)\s*$/i;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export async function createAuth(deps: {
  config: Config;
  db: Db;
  logger: Logger;
  database?: Pick<Database, "kind" | "listen">;
}): Promise<Auth> {
  const { config, db, logger } = deps;
  const users = new UserService(db);
  const admins = new AdminRepository(db);
  const apiKeys = new ApiKeyService(db, config.API_KEY_CACHE_TTL_S * 1000);
  // The key cache is enabled only while the database's change notifications arrive (see ApiKeyCache).
  const stopListening =
    deps.database && config.API_KEY_CACHE_TTL_S > 0
      ? await deps.database.listen(
          API_KEY_CHANNEL,
          (hash) => apiKeys.cache.invalidate(hash),
          (listening) => {
            apiKeys.cache.setListening(listening);
            if (!listening) logger.warn("API-key change notifications lost; keys are looked up on every request until they are back");
          },
        )
      : async () => {};
  const sessions = new SessionService(db, config.SESSION_TTL_HOURS);
  const workspaces = new WorkspaceRepository(db);
  const limiters = createLimiters({ redisUrl: config.REDIS_URL, keyPrefix: config.RATE_LIMIT_KEY_PREFIX, logger });
  await limiters.ready();
  // On PGlite this process owns the database folder: the users/keys CLI reaches it through this socket.
  const closeAdminSocket =
    deps.database?.kind === "pglite"
      ? await startAdminSocket(adminSocketPath(config.dataDir), directOps(users, apiKeys, admins, new AuditLog({ db, logger })), logger)
      : async () => {};

  /** Counts the request against its limit, sets the three headers, and refuses with 429 when spent. */
  async function rateLimit(
    res: AuthResponse,
    scope: string,
    id: string,
    limit: number,
    who: "auth.rate_limit_key" | "auth.rate_limit_dashboard",
  ): Promise<void> {
    const decision = await limiters.consume(scope, id, limit, 60);
    const headers = rateLimitHeaders(decision);
    res.set(headers);
    if (!decision.allowed) {
      throw new ApiError(429, "rate_limit_exceeded", msg(who, { limit }), undefined, {
        ...headers,
        "retry-after": retryAfterSeconds(decision),
      });
    }
  }

  async function viaApiKey(req: AuthRequest, res: AuthResponse): Promise<AuthInfo> {
    const header = req.get("authorization");
    if (!header) throw new ApiError(401, "missing_api_key", msg("auth.missing_api_key"));
    const token = BEARER.exec(header)?.[1];
    // Cached lookups are dropped by the revocation itself in this process and by its notification in the others.
    const key = token ? await apiKeys.lookup(token) : undefined;
    if (!key) throw new ApiError(401, "invalid_api_key", msg("auth.invalid_api_key"));
    if (key.revokedAt) throw new ApiError(403, "api_key_revoked", msg("auth.api_key_revoked"));
    // Before the rate limit, as a revoked key: an expired key's calls are not counted against anything.
    if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) throw new ApiError(401, "api_key_expired", msg("auth.api_key_expired"));
    if (key.userDisabled) throw new ApiError(403, "account_disabled", msg("auth.key_owner_disabled"));
    await rateLimit(res, "key", key.id, key.rateLimitPerMinute ?? config.RATE_LIMIT_PER_MINUTE, "auth.rate_limit_key");
    // The key acts in its own workspace (the header is ignored for keys), read with the key: no query more here.
    if (!key.workspace) throw workspaceNotFound();
    apiKeys.touch(key.id);
    return {
      userId: key.userId,
      email: key.email,
      role: key.role,
      via: "api_key",
      keyId: key.id,
      keyScopes: key.scopes,
      keyModelIds: key.modelIds,
      workspace: key.workspace,
    };
  }

  async function viaSession(req: AuthRequest, res: AuthResponse): Promise<AuthInfo> {
    const token = readCookie(req.get("cookie"), SESSION_COOKIE);
    if (!token) throw new ApiError(401, "session_required", msg("auth.session_required"));
    const session = await sessions.lookup(token);
    if (!session) throw new ApiError(401, "invalid_session", msg("auth.invalid_session"));
    // The cookie rides along on cross-site requests too; the CSRF token (readable only by our own pages) does not.
    if (!SAFE_METHODS.has(req.method) && !safeEqual(req.get("x-csrf-token") ?? "", session.csrfToken)) {
      throw new ApiError(403, "invalid_csrf_token", msg("auth.invalid_csrf_token"));
    }
    // Dashboard traffic is limited per user at the default rate, and gets the same headers.
    await rateLimit(res, "user", session.userId, config.RATE_LIMIT_PER_MINUTE, "auth.rate_limit_dashboard");
    // The dashboard names the workspace it shows (header, else cookie); without either, the user's personal workspace.
    const named = req.get(WORKSPACE_HEADER)?.trim() || readCookie(req.get("cookie"), WORKSPACE_COOKIE)?.trim() || undefined;
    const workspace = await workspaces.resolve(session.userId, named);
    if (!workspace) throw workspaceNotFound();
    return {
      userId: session.userId,
      email: session.email,
      role: session.role,
      via: "session",
      sessionId: session.sessionId,
      workspace,
    };
  }

  return {
    users,
    admins,
    apiKeys,
    sessions,
    account: new AccountService(db),
    firstRun: new FirstRunSetup(db, { ttlMs: config.SETUP_CODE_TTL_HOURS * 3_600_000 }),
    limiters,
    async authenticate(req, res, mode) {
      switch (mode) {
        case "none":
          return null;
        case "api_key":
          return viaApiKey(req, res);
        case "session":
          return viaSession(req, res);
        case "any":
          // A Bearer header wins; without one, a session cookie; with neither, the API's own error.
          if (req.get("authorization") || !readCookie(req.get("cookie"), SESSION_COOKIE)) return viaApiKey(req, res);
          return viaSession(req, res);
      }
    },
    signIn: (input) =>
      signIn(
        {
          users,
          sessions,
          limiters,
          limits: { perPair: config.SIGNIN_ATTEMPTS_PER_15_MIN, perAddress: config.SIGNIN_ATTEMPTS_PER_ADDRESS_PER_15_MIN },
        },
        input,
      ),
    cookieOptions: () => ({
      httpOnly: true,
      secure: config.COOKIE_SECURE ?? config.NODE_ENV === "production",
      sameSite: "lax",
      path: "/",
      maxAge: config.SESSION_TTL_HOURS * 3600_000,
    }),
    async close() {
      await stopListening();
      await closeAdminSocket();
      await apiKeys.flush();
      await limiters.close();
    },
  };
}
