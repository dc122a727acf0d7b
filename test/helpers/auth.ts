import { randomBytes } from "node:crypto";
import type { TestServer } from "./server.js";
import type { Db } from "../../src/db/client.js";
import { personalScope, type Scope } from "../../src/workspaces/scope.js";
import { ALL_KEY_SCOPES, type KeyScope } from "../../src/auth/key-scopes.js";

export interface UserWithKey {
  userId: string;
  /** The user acting in their personal workspace (what services take); its id is scope.workspace.id. */
  scope: Scope;
  email: string;
  password: string;
  key: string;
  keyId: string;
}

/** A fresh user and an API key (every scope unless asked), made through the services (no HTTP), for tests of authenticated routes. */
export async function createUserWithKey(
  server: TestServer,
  opts: { email?: string; password?: string; rateLimitPerMinute?: number; keyName?: string; scopes?: readonly KeyScope[] } = {},
): Promise<UserWithKey> {
  const email = opts.email ?? `user-${randomBytes(6).toString("hex")}@test.example`;
  const password = opts.password ?? `pw-${randomBytes(12).toString("hex")}`;
  const { auth } = server.services;
  const user = await auth.users.create({ email, password });
  const { key, info } = await auth.apiKeys.create(user.id, {
    scopes: opts.scopes ?? ALL_KEY_SCOPES,
    name: opts.keyName ?? "test",
    rateLimitPerMinute: opts.rateLimitPerMinute,
  });
  return { userId: user.id, scope: await personalScope(server.services.db, user.id), email: user.email, password, key, keyId: info.id };
}

/** A user acting in their personal workspace, for tests that call services directly. */
export function personal(db: Db, userId: string): Promise<Scope> {
  return personalScope(db, userId);
}

/** The id of the user's personal workspace (rows a test inserts directly belong to it). */
export async function personalWorkspaceId(db: Db, userId: string): Promise<string> {
  return (await personalScope(db, userId)).workspace.id;
}

/** Request headers carrying the key. */
export function bearer(key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${key}`, ...extra };
}

/**
 * Server env that puts the rate limiters on the real Redis for the Postgres target when TEST_REDIS_URL is set
 * (PGlite runs keep the in-memory limiter), under a key prefix unique to this run so runs never share counters.
 */
export function limiterEnv(target: string): Record<string, string> {
  const redis = process.env.TEST_REDIS_URL;
  if (!redis || target !== "postgres") return {};
  return { REDIS_URL: redis, RATE_LIMIT_KEY_PREFIX: `builder-test:${randomBytes(6).toString("hex")}` };
}

/**
 * Signs the user in through POST /v1/session: the headers a dashboard request carries (the session cookie, the CSRF
 * token, JSON), plus `x-builder-workspace` when a workspace is named.
 */
export async function signIn(
  server: Pick<TestServer, "url">,
  user: Pick<UserWithKey, "email" | "password">,
  workspaceId?: string,
): Promise<Record<string, string>> {
  const res = await fetch(`${server.url}/v1/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  if (res.status !== 200) throw new Error(`sign-in of ${user.email} answered ${res.status}: ${await res.text()}`);
  const { csrf_token } = (await res.json()) as { csrf_token: string };
  return {
    cookie: res.headers.get("set-cookie")!.split(";")[0]!,
    "x-csrf-token": csrf_token,
    "content-type": "application/json",
    ...(workspaceId ? { "x-builder-workspace": workspaceId } : {}),
  };
}
