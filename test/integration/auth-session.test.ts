import { sha256Hex } from "../../src/auth/secrets.js";
import { sessions } from "../../src/db/schema.js";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bearer, createUserWithKey, limiterEnv, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const ATTEMPTS = 4;
const ADDRESS_ATTEMPTS = 20;
let ipCounter = 0;
/** Each test signs in from its own address (the app trusts X-Forwarded-For from loopback), so per-IP throttling stays per test. */
function freshIp(): string {
  ipCounter += 1;
  return `10.0.${Math.floor(ipCounter / 250)}.${ipCounter % 250}`;
}

async function signIn(server: TestServer, email: string, password: string, ip: string) {
  const res = await fetch(`${server.url}/v1/session`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as any;
  const setCookie = res.headers.get("set-cookie") ?? "";
  const cookie = setCookie.split(";")[0];
  return { res, body, setCookie, cookie };
}

describeEachTarget("dashboard sessions on %s", (target) => {
  let server: TestServer;
  let user: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer(target, {
      SIGNIN_ATTEMPTS_PER_15_MIN: String(ATTEMPTS),
      SIGNIN_ATTEMPTS_PER_ADDRESS_PER_15_MIN: String(ADDRESS_ATTEMPTS),
      RATE_LIMIT_PER_MINUTE: "777",
      ...limiterEnv(target),
    });
    user = await createUserWithKey(server);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("lists the account routes in OpenAPI with their auth", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    expect(doc.paths["/v1/me"].get.security).toEqual([{ bearer: [] }, { session: [] }]);
    expect(doc.paths["/v1/session"].post.requestBody.content["application/json"].schema.required.sort()).toEqual(["email", "password"]);
    expect(Object.keys(doc.paths["/v1/session"]).sort()).toEqual(["delete", "get", "post"]);
    expect(doc.paths["/v1/api-keys"].post.responses["201"]).toBeTruthy();
    expect(doc.paths["/v1/api-keys"].get.security).toEqual([{ session: [] }]);
    expect(doc.paths["/v1/api-keys/{id}"].delete.parameters[0]).toMatchObject({ name: "id", in: "path", required: true });
  });

  it("signs in with a httpOnly SameSite=Lax cookie and answers GET /v1/session, /v1/me", async () => {
    const { res, body, setCookie, cookie } = await signIn(server, user.email.toUpperCase(), user.password, freshIp());
    expect(res.status).toBe(200);
    expect(body).toEqual({
      user_id: user.userId,
      email: user.email,
      role: "member",
      csrf_token: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(setCookie).toMatch(/^builder_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).not.toMatch(/Secure/i); // NODE_ENV=test and COOKIE_SECURE unset
    const session = await fetch(`${server.url}/v1/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as any).csrf_token).toBe(body.csrf_token);
    expect(session.headers.get("x-ratelimit-limit-requests")).toBeTruthy();
    const me = await fetch(`${server.url}/v1/me`, { headers: { cookie } });
    expect(await me.json()).toEqual({ user_id: user.userId, email: user.email, role: "member" });
    // Only the token's SHA-256 is stored.
    const token = cookie.split("=")[1];
    const dump = JSON.stringify(await server.services.db.select().from(sessions));
    expect(dump).toContain(sha256Hex(token));
    expect(dump).not.toContain(token);
  });

  it("manages API keys over the session, with CSRF on unsafe methods", async () => {
    const { body: s, cookie } = await signIn(server, user.email, user.password, freshIp());
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/v1/api-keys`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie, ...headers },
        body: JSON.stringify({ name: "ci", rate_limit_per_minute: 50, scopes: ["read"] }), // /v1/me below needs read
      });
    const noCsrf = await post({});
    expect(noCsrf.status).toBe(403);
    expect(((await noCsrf.json()) as any).error.code).toBe("invalid_csrf_token");
    expect((await post({ "x-csrf-token": "wrong" })).status).toBe(403);
    const created = await post({ "x-csrf-token": s.csrf_token });
    expect(created.status).toBe(201);
    const key = (await created.json()) as any;
    expect(key).toMatchObject({ name: "ci", rate_limit_per_minute: 50, revoked_at: null, last_used_at: null });
    expect(key.key).toMatch(/^bld_[0-9A-Za-z]{43}$/);
    expect(key.prefix).toBe(key.key.slice(0, 12));
    // The new key works and carries its own limit.
    const me = await fetch(`${server.url}/v1/me`, { headers: bearer(key.key) });
    expect(me.status).toBe(200);
    expect(me.headers.get("x-ratelimit-limit-requests")).toBe("50");

    const list = (await (await fetch(`${server.url}/v1/api-keys`, { headers: { cookie } })).json()) as any;
    expect(list.data.map((k: any) => k.id)).toContain(key.id);
    expect(JSON.stringify(list)).not.toContain(key.key);
    expect(list.default_rate_limit_per_minute).toBe(777); // what a key without its own limit gets

    const del = await fetch(`${server.url}/v1/api-keys/${key.id}`, { method: "DELETE", headers: { cookie, "x-csrf-token": s.csrf_token } });
    expect(del.status).toBe(200);
    expect(((await del.json()) as any).revoked_at).toEqual(expect.any(String));
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(key.key) })).status).toBe(403);
  });

  it("answers 404 for another user's key, and API keys cannot manage keys", async () => {
    const other = await createUserWithKey(server);
    const { body: s, cookie } = await signIn(server, user.email, user.password, freshIp());
    const del = await fetch(`${server.url}/v1/api-keys/${other.keyId}`, {
      method: "DELETE",
      headers: { cookie, "x-csrf-token": s.csrf_token },
    });
    expect(del.status).toBe(404);
    expect(((await del.json()) as any).error.code).toBe("not_found");
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(other.key) })).status).toBe(200);
    const junk = await fetch(`${server.url}/v1/api-keys/not-a-uuid`, {
      method: "DELETE",
      headers: { cookie, "x-csrf-token": s.csrf_token },
    });
    expect(junk.status).toBe(404);
    const viaKey = await fetch(`${server.url}/v1/api-keys`, { headers: bearer(user.key) });
    expect(viaKey.status).toBe(401);
    expect(((await viaKey.json()) as any).error.code).toBe("session_required");
  });

  it("validates the new key's body: every bad field in one 400", async () => {
    const { body: s, cookie } = await signIn(server, user.email, user.password, freshIp());
    const res = await fetch(`${server.url}/v1/api-keys`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie, "x-csrf-token": s.csrf_token },
      body: JSON.stringify({ name: "", rate_limit_per_minute: 0 }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.details.map((d: any) => d.field).sort()).toEqual(["name", "rate_limit_per_minute"]);
  });

  it("signs out: the cookie stops working, and DELETE needs the CSRF token", async () => {
    const { body: s, cookie } = await signIn(server, user.email, user.password, freshIp());
    expect((await fetch(`${server.url}/v1/session`, { method: "DELETE", headers: { cookie } })).status).toBe(403);
    const out = await fetch(`${server.url}/v1/session`, { method: "DELETE", headers: { cookie, "x-csrf-token": s.csrf_token } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/builder_session=;/);
    const after = await fetch(`${server.url}/v1/session`, { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as any).error.code).toBe("invalid_session");
    const none = await fetch(`${server.url}/v1/session`);
    expect(((await none.json()) as any).error.code).toBe("session_required");
  });

  it("refuses an expired session: 401 invalid_session", async () => {
    const { res, cookie } = await signIn(server, user.email, user.password, freshIp());
    expect(res.status).toBe(200);
    const token = cookie.split("=")[1];
    await server.services.db
      .update(sessions)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(sessions.tokenHash, sha256Hex(token)));
    const after = await fetch(`${server.url}/v1/session`, { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as any).error.code).toBe("invalid_session");
  });

  // Issue 19: ten wrong sign-ins by anyone used to lock the owner out for 15 minutes (a per-email lock-out).
  it("a stranger's wrong guesses slow only the stranger (address+email backoff); the owner signs in from their address", async () => {
    const victim = await createUserWithKey(server);
    const stranger = freshIp();
    for (let i = 0; i < ATTEMPTS; i++) {
      const { res, body } = await signIn(server, victim.email, "wrong password!!", stranger);
      expect(res.status).toBe(401);
      expect(body.error.code).toBe("invalid_credentials");
    }
    // Past the free attempts: one more try opens a 2 s backoff; the next within it is refused, right password or not.
    expect((await signIn(server, victim.email, "wrong password!!", stranger)).res.status).toBe(401);
    const { res, body } = await signIn(server, victim.email, victim.password, stranger);
    expect(res.status).toBe(429);
    expect(body).toEqual({ error: { code: "rate_limit_exceeded", message: expect.any(String), type: "rate_limit_error" } });
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    // Hammering makes it worse: refused tries count, so the next period, once this one is over, is far longer.
    for (let i = 0; i < 4; i++) expect((await signIn(server, victim.email, "wrong password!!", stranger)).res.status).toBe(429);
    await new Promise((r) => setTimeout(r, retryAfter * 1000 + 100));
    expect((await signIn(server, victim.email, "wrong password!!", stranger)).res.status).toBe(401);
    const longer = await signIn(server, victim.email, "wrong password!!", stranger);
    expect(longer.res.status).toBe(429);
    expect(Number(longer.res.headers.get("retry-after"))).toBeGreaterThan(60);
    // The owner, from their own address, is not locked out.
    const owner = await signIn(server, victim.email, victim.password, freshIp());
    expect(owner.res.status).toBe(200);
  });

  it("throttles sign-in per address across emails; a success does not count against the address", async () => {
    const ip = freshIp();
    const ok = await signIn(server, user.email, user.password, ip);
    expect(ok.res.status).toBe(200);
    for (let i = 0; i < ADDRESS_ATTEMPTS; i++) {
      const { res } = await signIn(server, `nobody-${i}@test.example`, "wrong password!!", ip);
      expect(res.status).toBe(401);
    }
    const blocked = await signIn(server, user.email, user.password, ip);
    expect(blocked.res.status).toBe(429);
    expect(blocked.res.headers.get("retry-after")).toBeTruthy();
    // Another address is unaffected.
    expect((await signIn(server, user.email, user.password, freshIp())).res.status).toBe(200);
  });

  // Issue 48 finding 15: each full IPv6 address had its own allowance, and one client holds a whole /64.
  it("counts sign-in attempts per IPv6 /64, and an IPv4-mapped address as its IPv4 address", async () => {
    const prefix = `2001:db8:48:${(++ipCounter).toString(16)}`;
    for (let i = 0; i < ADDRESS_ATTEMPTS; i++) {
      const { res } = await signIn(server, `nobody-${i}@test.example`, "wrong password!!", `${prefix}::${(i + 1).toString(16)}`);
      expect(res.status).toBe(401);
    }
    // Another address of the same /64 is the same client: refused.
    const sameNet = await signIn(server, user.email, user.password, `${prefix}:ffff:ffff:ffff:ffff`);
    expect(sameNet.res.status).toBe(429);
    // The next /64 is someone else.
    expect((await signIn(server, user.email, user.password, `2001:db8:49:${ipCounter.toString(16)}::1`)).res.status).toBe(200);

    const v4 = freshIp();
    for (let i = 0; i < ADDRESS_ATTEMPTS; i++) {
      const { res } = await signIn(server, `nobody-${i}@test.example`, "wrong password!!", i % 2 ? v4 : `::ffff:${v4}`);
      expect(res.status).toBe(401);
    }
    expect((await signIn(server, user.email, user.password, `::ffff:${v4}`)).res.status).toBe(429);
    expect((await signIn(server, user.email, user.password, v4)).res.status).toBe(429);
  });
});
