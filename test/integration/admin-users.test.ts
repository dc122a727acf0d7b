import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { bearer, createUserWithKey, limiterEnv, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// Settings → Users over HTTP (issue 38 item 4), on PGlite and on the real Postgres (+ Redis limiters): only an
// administrator reaches /v1/admin; an invitation link makes one account, once, and not after it expires; a
// disabled account loses its sign-in, its sessions and its API keys at once; the last administrator stays one; a
// reset link sets a password once and ends the sessions; and every one of these leaves its audit entry.

type Json = any;

describeEachTarget("administrators manage users (%s)", (target) => {
  let server: TestServer;
  let admin: UserWithKey;
  let member: UserWithKey;

  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const r = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as Json, headers: r.headers };
  };
  const signIn = async (email: string, password: string) => {
    const r = await call("POST", "/v1/session", {}, { email, password });
    if (r.status !== 200) return { status: r.status, code: r.body.error.code as string, dash: {} as Record<string, string> };
    const cookie = r.headers.get("set-cookie")!.split(";")[0]!;
    return { status: 200, code: null, role: r.body.role, dash: { cookie, "x-csrf-token": r.body.csrf_token as string } };
  };
  const asAdmin = () => bearer(admin.key);
  const audit = async (who: UserWithKey | string) => {
    const headers = typeof who === "string" ? { cookie: who } : bearer(who.key);
    return (await call("GET", "/v1/audit?limit=100", headers)).body.data as Array<{ action: string; target: string | null }>;
  };

  beforeAll(async () => {
    server = await startTestServer(target, {
      API_KEY_CACHE_TTL_S: "60",
      PUBLIC_URL: "https://builder.hospital.example/",
      ...limiterEnv(target),
    });
    admin = await createUserWithKey(server);
    await server.services.auth.admins.changeAccess(admin.userId, { role: "admin" });
    member = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  it("a member (key or session) gets 403 admin_only, in plain words, on every /v1/admin route", async () => {
    const { dash } = await signIn(member.email, member.password);
    for (const headers of [bearer(member.key), dash]) {
      for (const [method, path, body] of [
        ["GET", "/v1/admin/users"],
        ["GET", "/v1/admin/invitations"],
        ["POST", "/v1/admin/invitations", { role: "admin" }],
        ["POST", `/v1/admin/users/${admin.userId}/disable`],
        ["PUT", `/v1/admin/users/${member.userId}/role`, { role: "admin" }],
        ["POST", `/v1/admin/users/${admin.userId}/password-reset`],
      ] as const) {
        const r = await call(method, path, headers, body);
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.body.error.code).toBe("admin_only");
        expect(r.body.error.message).toMatch(/only an administrator/);
      }
    }
    expect((await call("GET", "/v1/admin/users", {})).status).toBe(401);
    const list = await call("GET", "/v1/admin/users", asAdmin());
    expect(list.status).toBe(200);
    expect(list.body.data.find((u: Json) => u.id === admin.userId)).toMatchObject({ role: "admin", status: "active" });
    expect(list.body.data.find((u: Json) => u.id === member.userId)).toMatchObject({ role: "member", status: "active" });
    expect((await call("GET", "/v1/me", bearer(member.key))).body.role).toBe("member");
  });

  it("an invitation link makes one account, once; a used, expired or withdrawn one is refused with the reason", async () => {
    const made = await call("POST", "/v1/admin/invitations", asAdmin(), { email: "New.Person@Hospital.example", role: "member" });
    expect(made.status).toBe(201);
    expect(made.headers.get("cache-control")).toBe("no-store");
    expect(made.body.path).toBe(`/invite#${made.body.token}`);
    expect(made.body.url).toBe(`https://builder.hospital.example/invite#${made.body.token}`);
    const hours = (Date.parse(made.body.expires_at) - Date.now()) / 3600_000;
    expect(hours).toBeGreaterThan(71.9);
    expect(hours).toBeLessThanOrEqual(72);
    // Only the token's hash is stored.
    const stored = await server.services.db.execute(sql`select token_hash from account_links where id = ${made.body.id}`);
    expect(JSON.stringify(stored)).not.toContain(made.body.token);

    const pending = await call("GET", "/v1/admin/invitations", asAdmin());
    expect(pending.body.data.map((i: Json) => i.id)).toContain(made.body.id);
    expect(JSON.stringify(pending.body)).not.toContain(made.body.token);

    const check = await call("POST", "/v1/invitations/check", {}, { token: made.body.token });
    expect(check).toMatchObject({ status: 200, body: { email: "new.person@hospital.example", role: "member" } });

    const password = `pw-${randomBytes(9).toString("hex")}`;
    const [first, second] = await Promise.all([
      call("POST", "/v1/invitations/accept", {}, { token: made.body.token, email: "new.person@hospital.example", password }),
      call("POST", "/v1/invitations/accept", {}, { token: made.body.token, email: "someone.else@hospital.example", password }),
    ]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([201, 410]); // two at once: one account between them
    const refused = first.status === 410 ? first : second;
    expect(refused.body.error).toMatchObject({ code: "invitation_used" });
    expect(refused.body.error.message).toMatch(/already been used/);
    const again = await call("POST", "/v1/invitations/accept", {}, { token: made.body.token, email: "third@hospital.example", password });
    expect(again).toMatchObject({ status: 410, body: { error: { code: "invitation_used" } } });
    expect((await call("GET", "/v1/admin/invitations", asAdmin())).body.data.map((i: Json) => i.id)).not.toContain(made.body.id);

    const newEmail = first.status === 201 ? "new.person@hospital.example" : "someone.else@hospital.example";
    expect(await signIn(newEmail, password)).toMatchObject({ status: 200, role: "member" });

    // Expired: refused on the check and on use.
    const old = await call("POST", "/v1/admin/invitations", asAdmin(), { role: "member" });
    await server.services.db.execute(sql`update account_links set expires_at = now() - interval '1 second' where id = ${old.body.id}`);
    expect((await call("POST", "/v1/invitations/check", {}, { token: old.body.token })).body.error.code).toBe("invitation_expired");
    const late = await call("POST", "/v1/invitations/accept", {}, { token: old.body.token, email: "late@hospital.example", password });
    expect(late).toMatchObject({ status: 410, body: { error: { code: "invitation_expired" } } });
    expect(late.body.error.message).toMatch(/expired/);

    // Withdrawn.
    const gone = await call("POST", "/v1/admin/invitations", asAdmin(), { role: "admin" });
    expect((await call("DELETE", `/v1/admin/invitations/${gone.body.id}`, asAdmin())).status).toBe(200);
    const withdrawn = await call("POST", "/v1/invitations/accept", {}, { token: gone.body.token, email: "w@hospital.example", password });
    expect(withdrawn).toMatchObject({ status: 410, body: { error: { code: "invitation_revoked" } } });
    expect((await call("POST", "/v1/invitations/check", {}, { token: "made-up" })).status).toBe(404);

    // An email that already has an account: 409, and the invitation stays usable.
    const taken = await call("POST", "/v1/admin/invitations", asAdmin(), { role: "admin" });
    const clash = await call("POST", "/v1/invitations/accept", {}, { token: taken.body.token, email: member.email, password });
    expect(clash).toMatchObject({ status: 409, body: { error: { code: "email_taken" } } });
    const ok = await call(
      "POST",
      "/v1/invitations/accept",
      {},
      { token: taken.body.token, email: "second.admin@hospital.example", password },
    );
    expect(ok).toMatchObject({ status: 201, body: { role: "admin" } });

    const actions = (await audit(admin)).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(["invitation_created", "invitation_revoked"]));
    const newcomer = (await call("GET", "/v1/admin/users", asAdmin())).body.data.find((u: Json) => u.email === newEmail);
    const used = await server.services.db.execute(
      sql`select action, target from audit_events where actor_id = ${newcomer.id} and action = 'invitation_used'`,
    );
    expect(JSON.stringify(used)).toContain(`invitation ${made.body.id}`);
  });

  it("disabling ends sign-in, sessions and API keys at once (the key was cached); enabling brings them back", async () => {
    const user = await createUserWithKey(server);
    const session = await signIn(user.email, user.password);
    expect((await call("GET", "/v1/me", bearer(user.key))).status).toBe(200); // now cached (TTL 60 s)
    expect((await call("GET", "/v1/me", session.dash)).status).toBe(200);

    const off = await call("POST", `/v1/admin/users/${user.userId}/disable`, asAdmin());
    expect(off).toMatchObject({ status: 200, body: { status: "disabled" } });
    expect(await call("GET", "/v1/me", bearer(user.key))).toMatchObject({ status: 403, body: { error: { code: "account_disabled" } } });
    expect((await call("GET", "/v1/me", session.dash)).status).toBe(401);
    expect(await signIn(user.email, user.password)).toMatchObject({ status: 403, code: "account_disabled" });
    expect(await signIn(user.email, "not the password at all")).toMatchObject({ status: 401, code: "invalid_credentials" });

    const on = await call("POST", `/v1/admin/users/${user.userId}/enable`, asAdmin());
    expect(on).toMatchObject({ status: 200, body: { status: "active" } });
    expect((await call("GET", "/v1/me", bearer(user.key))).status).toBe(200);
    expect((await signIn(user.email, user.password)).status).toBe(200);

    const actions = (await audit(admin)).map((e) => `${e.action} ${e.target}`);
    expect(actions).toEqual(expect.arrayContaining([`user_disabled user ${user.userId}`, `user_enabled user ${user.userId}`]));

    // A disabled administrator's pending links are withdrawn with the account.
    const otherAdmin = await createUserWithKey(server);
    await call("PUT", `/v1/admin/users/${otherAdmin.userId}/role`, asAdmin(), { role: "admin" });
    const theirs = await call("POST", "/v1/admin/invitations", bearer(otherAdmin.key), { role: "admin" });
    expect((await call("POST", `/v1/admin/users/${otherAdmin.userId}/disable`, asAdmin())).status).toBe(200);
    const check = await call("POST", "/v1/invitations/check", {}, { token: theirs.body.token });
    expect(check).toMatchObject({ status: 410, body: { error: { code: "invitation_revoked" } } });
  });

  it("an administrator cannot disable themselves, nor demote or disable the last active administrator", async () => {
    const self = await call("POST", `/v1/admin/users/${admin.userId}/disable`, asAdmin());
    expect(self).toMatchObject({ status: 409, body: { error: { code: "cannot_disable_self" } } });
    // A second administrator: the first may be demoted, then the second is the last and stays one.
    const other = await createUserWithKey(server);
    expect((await call("PUT", `/v1/admin/users/${other.userId}/role`, asAdmin(), { role: "admin" })).status).toBe(200);
    expect((await call("PUT", `/v1/admin/users/${admin.userId}/role`, bearer(other.key), { role: "member" })).body.role).toBe("member");
    expect((await call("GET", "/v1/admin/users", asAdmin())).status).toBe(403); // the demotion reached the cached key
    // Every other admin made by the invitations above is disabled, so `other` is the last active one.
    for (const u of (await call("GET", "/v1/admin/users", bearer(other.key))).body.data as Json[]) {
      if (u.role === "admin" && u.id !== other.userId) await call("POST", `/v1/admin/users/${u.id}/disable`, bearer(other.key));
    }
    const demote = await call("PUT", `/v1/admin/users/${other.userId}/role`, bearer(other.key), { role: "member" });
    expect(demote).toMatchObject({ status: 409, body: { error: { code: "last_admin" } } });
    expect(demote.body.error.message).toMatch(/last active administrator/);
    const outcome = await server.services.auth.admins.changeAccess(other.userId, { disabledAt: new Date() });
    expect(outcome).toBe("last_admin");
    // Erasing one's own account as the last administrator is refused too (others would be left without one).
    const erase = await call("DELETE", "/v1/me", bearer(other.key), { password: other.password });
    expect(erase).toMatchObject({ status: 409, body: { error: { code: "last_admin" } } });
    expect((await audit(other)).map((e) => e.action)).toContain("role_changed");
    // Back as it was for the next test.
    expect((await call("PUT", `/v1/admin/users/${admin.userId}/role`, bearer(other.key), { role: "admin" })).status).toBe(200);
  });

  it("a reset link sets the password once and signs the user out everywhere", async () => {
    const user = await createUserWithKey(server);
    const session = await signIn(user.email, user.password);
    const first = await call("POST", `/v1/admin/users/${user.userId}/password-reset`, asAdmin());
    const issued = await call("POST", `/v1/admin/users/${user.userId}/password-reset`, asAdmin());
    expect(issued.status).toBe(201);
    expect(issued.body.path).toBe(`/reset-password#${issued.body.token}`);
    const hours = (Date.parse(issued.body.expires_at) - Date.now()) / 3600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    // The newer link replaces the older one.
    const replaced = await call("POST", "/v1/password-resets/check", {}, { token: first.body.token });
    expect(replaced).toMatchObject({ status: 410, body: { error: { code: "reset_link_revoked" } } });
    expect((await call("POST", "/v1/password-resets/check", {}, { token: issued.body.token })).body).toMatchObject({
      email: user.email,
      api_keys: 1,
    });

    const weak = await call("POST", "/v1/password-resets/use", {}, { token: issued.body.token, password: "short" });
    expect(weak).toMatchObject({ status: 400, body: { error: { details: [{ field: "password" }] } } });
    const next = `new-${randomBytes(9).toString("hex")}`;
    expect(await call("POST", "/v1/password-resets/use", {}, { token: issued.body.token, password: next })).toMatchObject({
      status: 200,
      body: { email: user.email, api_keys_revoked: 1 },
    });
    expect((await call("GET", "/v1/me", session.dash)).status).toBe(401);
    expect((await signIn(user.email, user.password)).status).toBe(401);
    expect((await signIn(user.email, next)).status).toBe(200);
    const twice = await call("POST", "/v1/password-resets/use", {}, { token: issued.body.token, password: `x${next}` });
    expect(twice).toMatchObject({ status: 410, body: { error: { code: "reset_link_used" } } });

    expect((await audit(admin)).map((e) => `${e.action} ${e.target}`)).toContain(`password_reset_issued user ${user.userId}`);
    // The user's key went with the reset (the default): the log is read with the new password's session.
    expect((await audit((await signIn(user.email, next)).dash.cookie!)).map((e) => e.action)).toContain("password_reset_used");
  });

  // Issue 48 finding 13: a reset left the account's API keys working, and the reset page did not say so.
  it("a reset revokes the account's API keys unless asked not to, says how many work before, and logs which it was", async () => {
    const reset = async (user: UserWithKey, body: Record<string, unknown>) => {
      const issued = await call("POST", `/v1/admin/users/${user.userId}/password-reset`, asAdmin());
      const check = await call("POST", "/v1/password-resets/check", {}, { token: issued.body.token });
      const password = `new-${randomBytes(9).toString("hex")}`;
      const used = await call("POST", "/v1/password-resets/use", {}, { token: issued.body.token, password, ...body });
      const session = await signIn(user.email, password);
      const entry = (await call("GET", "/v1/audit?limit=100", { cookie: session.dash.cookie! })).body.data.find(
        (e: Json) => e.action === "password_reset_used",
      );
      return { check: check.body, used: used.body, entry };
    };

    const revoking = await createUserWithKey(server);
    const second = await server.services.auth.apiKeys.create(revoking.userId, { scopes: ALL_KEY_SCOPES, name: "second" });
    await server.services.auth.apiKeys.revoke(
      (await server.services.auth.apiKeys.create(revoking.userId, { scopes: ALL_KEY_SCOPES, name: "old" })).info.id,
      revoking.userId,
    );
    expect((await call("GET", "/v1/me", bearer(revoking.key))).status).toBe(200); // cached in this process now
    const r = await reset(revoking, {});
    expect(r.check.api_keys).toBe(2); // the revoked one does not count
    expect(r.used).toEqual({ email: revoking.email, api_keys_revoked: 2 });
    for (const key of [revoking.key, second.key]) {
      const me = await call("GET", "/v1/me", bearer(key));
      expect(me.status).toBe(403);
      expect(me.body.error.code).toBe("api_key_revoked");
    }
    expect(r.entry).toMatchObject({ target: `user ${revoking.userId}`, details: { api_keys_revoked: 2 } });

    const keeping = await createUserWithKey(server);
    const k = await reset(keeping, { revoke_api_keys: false });
    expect(k.check.api_keys).toBe(1);
    expect(k.used).toEqual({ email: keeping.email, api_keys_revoked: 0 });
    expect((await call("GET", "/v1/me", bearer(keeping.key))).status).toBe(200);
    expect(k.entry).toMatchObject({ details: { api_keys_kept: 1 } });

    const bad = await call(
      "POST",
      "/v1/password-resets/use",
      {},
      { token: "x".repeat(43), password: "long enough password", revoke_api_keys: "yes" },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain("revoke_api_keys");
  });

  it("erasing an administrator keeps the invitations they made usable, and removes reset links for the erased account", async () => {
    const second = await createUserWithKey(server);
    await call("PUT", `/v1/admin/users/${second.userId}/role`, asAdmin(), { role: "admin" });
    const invitation = await call("POST", "/v1/admin/invitations", bearer(second.key), { role: "member" });
    const reset = await call("POST", `/v1/admin/users/${second.userId}/password-reset`, asAdmin());
    expect((await call("DELETE", "/v1/me", bearer(second.key), { password: second.password })).status).toBe(202);
    expect((await call("POST", "/v1/password-resets/check", {}, { token: reset.body.token })).status).toBe(404);
    await server.services.erasure.finish(second.userId);
    expect(await server.services.auth.users.findById(second.userId)).toBeUndefined();
    const pending = (await call("GET", "/v1/admin/invitations", asAdmin())).body.data.find((i: Json) => i.id === invitation.body.id);
    expect(pending).toMatchObject({ created_by: null });
    const accepted = await call(
      "POST",
      "/v1/invitations/accept",
      {},
      {
        token: invitation.body.token,
        email: `after-${randomBytes(4).toString("hex")}@hospital.example`,
        password: "a long enough password",
      },
    );
    expect(accepted.status).toBe(201);
  });
});
