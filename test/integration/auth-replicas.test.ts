import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/auth/secrets.js";
import { bearer, createUserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Two API replicas behind a load balancer, as `docker compose up --scale api=2` runs them (make docker-test
// checks the same in containers): one real Postgres, one real Redis. A key's requests spread over both replicas
// count against one limit, and a key revoked through one replica's HTTP API is refused by the other at once
// (Postgres LISTEN/NOTIFY reaches its key cache, whose TTL is 60 s here).

const me = async (s: TestServer, key: string) => {
  const r = await fetch(`${s.url}/v1/me`, { headers: bearer(key) });
  const body = (await r.json()) as { error?: { code?: string } };
  return { status: r.status, remaining: r.headers.get("x-ratelimit-remaining-requests"), code: body.error?.code ?? null };
};

describe.skipIf(!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL)("two API replicas on one Postgres and one Redis", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    db = await createThrowawayDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      RATE_LIMIT_KEY_PREFIX: `builder-test:${randomBytes(6).toString("hex")}`,
      API_KEY_CACHE_TTL_S: "60",
    };
    a = await startTestServer("pglite", env); // "pglite": no throwaway of its own; DATABASE_URL wins
    b = await startTestServer("pglite", env);
  });
  afterAll(async () => {
    await a?.teardown();
    await b?.teardown();
    await db?.drop();
  });

  it("a key's limit spent over both replicas is refused on either: 429 rate_limit_exceeded", async () => {
    expect([a.services.auth.limiters.store, b.services.auth.limiters.store]).toEqual(["redis", "redis"]);
    const { key } = await createUserWithKey(a, { rateLimitPerMinute: 6 });
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push(await me(i % 2 ? b : a, key));
    expect(seen.map((r) => [r.status, r.remaining])).toEqual([200, 200, 200, 200, 200, 200].map((s, i) => [s, String(5 - i)]));
    expect(await me(a, key)).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    expect(await me(b, key)).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
  });

  it("a key revoked through replica A's HTTP API is refused by replica B, which had it cached, at once", async () => {
    const owner = await createUserWithKey(a);
    const signIn = await fetch(`${a.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: owner.email, password: owner.password }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const { csrf_token } = (await signIn.json()) as { csrf_token: string };
    const dash = { cookie, "x-csrf-token": csrf_token, "content-type": "application/json" };
    const created = (await (
      await fetch(`${a.url}/v1/api-keys`, { method: "POST", headers: dash, body: JSON.stringify({ name: "to-revoke", scopes: ["read"] }) })
    ).json()) as { id: string; key: string };
    expect((await me(b, created.key)).status).toBe(200);
    expect(b.services.auth.apiKeys.cache.get(sha256Hex(created.key))?.id).toBe(created.id); // B serves it from its cache
    expect((await fetch(`${a.url}/v1/api-keys/${created.id}`, { method: "DELETE", headers: dash })).status).toBe(200);
    const t0 = Date.now();
    let answer = await me(b, created.key);
    while (answer.status === 200 && Date.now() - t0 < 5_000) {
      await new Promise((r) => setTimeout(r, 5));
      answer = await me(b, created.key);
    }
    expect(answer).toMatchObject({ status: 403, code: "api_key_revoked" });
    expect(Date.now() - t0).toBeLessThan(5_000); // the cache TTL is 60 s: only the notification explains this
    expect(await me(a, created.key)).toMatchObject({ status: 403, code: "api_key_revoked" });
  });

  it("a user disabled through replica A is refused by replica B at once, though B had the user's key cached", async () => {
    const adminUser = await createUserWithKey(a);
    await a.services.auth.admins.changeAccess(adminUser.userId, { role: "admin" });
    const user = await createUserWithKey(a);
    expect((await me(b, user.key)).status).toBe(200);
    expect(b.services.auth.apiKeys.cache.get(sha256Hex(user.key))?.id).toBe(user.keyId); // B serves it from its cache
    const off = await fetch(`${a.url}/v1/admin/users/${user.userId}/disable`, { method: "POST", headers: bearer(adminUser.key) });
    expect(off.status).toBe(200);
    const t0 = Date.now();
    let answer = await me(b, user.key);
    while (answer.status === 200 && Date.now() - t0 < 5_000) {
      await new Promise((r) => setTimeout(r, 5));
      answer = await me(b, user.key);
    }
    // The users table's trigger (migration 0009) announced the user's keys on the revocation channel.
    expect(answer).toMatchObject({ status: 403, code: "account_disabled" });
    expect(Date.now() - t0).toBeLessThan(5_000); // the cache TTL is 60 s: only the notification explains this
  });
});
