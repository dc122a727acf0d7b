import type { Request, Response } from "express";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { ApiError } from "../http/errors.js";
import type { AuthInfo, AuthMode } from "../http/route.js";
import type { Logger } from "../logger.js";
import { ApiKeyService } from "./api-key.service.js";
import { createLimiters, rateLimitHeaders, retryAfterSeconds, type Limiters } from "./rate-limit.js";
import { UserService } from "./user.service.js";

export { ApiKeyService } from "./api-key.service.js";
export { UserService } from "./user.service.js";

export interface Auth {
  users: UserService;
  apiKeys: ApiKeyService;
  limiters: Limiters;
  /** Resolves the caller for a route's auth mode, or throws the ApiError (401/403/429) that refuses it. */
  authenticate(req: Request, res: Response, mode: AuthMode): Promise<AuthInfo | null>;
  close(): Promise<void>;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export async function createAuth(deps: { config: Config; db: Db; logger: Logger }): Promise<Auth> {
  const { config, db, logger } = deps;
  const users = new UserService(db);
  const apiKeys = new ApiKeyService(db);
  const limiters = createLimiters({ redisUrl: config.REDIS_URL, keyPrefix: config.RATE_LIMIT_KEY_PREFIX, logger });

  async function viaApiKey(req: Request, res: Response): Promise<AuthInfo> {
    const header = req.get("authorization");
    if (!header) throw new ApiError(401, "missing_api_key", "send your API key as Authorization: Bearer <key>");
    const token = BEARER.exec(header)?.[1];
    // The database is asked on every request, so a revocation holds from the very next request, on every replica.
    const key = token ? await apiKeys.lookup(token) : undefined;
    if (!key) throw new ApiError(401, "invalid_api_key", "the API key is not valid; create one with ./builder keys create or in the dashboard");
    if (key.revokedAt) throw new ApiError(403, "api_key_revoked", "this API key was revoked; create a new one");
    const limit = key.rateLimitPerMinute ?? config.RATE_LIMIT_PER_MINUTE;
    const decision = await limiters.consume("key", key.id, limit, 60);
    const headers = rateLimitHeaders(decision);
    res.set(headers);
    if (!decision.allowed) {
      throw new ApiError(429, "rate_limit_exceeded", `this API key allows ${limit} requests per minute; retry after the reset`, undefined, {
        ...headers,
        "retry-after": retryAfterSeconds(decision),
      });
    }
    apiKeys.touch(key.id);
    return { userId: key.userId, email: key.email, via: "api_key", keyId: key.id };
  }

  return {
    users,
    apiKeys,
    limiters,
    async authenticate(req, res, mode) {
      if (mode === "none") return null;
      if (mode === "api_key" || mode === "any") return viaApiKey(req, res);
      throw new ApiError(401, "session_required", "sign in to the dashboard first (POST /v1/session)");
    },
    async close() {
      await apiKeys.flush();
      await limiters.close();
    },
  };
}
