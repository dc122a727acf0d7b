import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { sha256Hex } from "../../src/auth/secrets.js";
import { bearer, createUserWithKey, limiterEnv, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Workspaces and members over HTTP (issue 50 items 2 and 5), on PGlite and on the real Postgres (+ Redis): an owner
// makes a workspace, adds an existing account, invites an unknown address (the link creates the account and the
// membership), changes a role; the last owner stays; a removed member's keys of that workspace are refused at once,
// on a second replica too (Postgres only: PGlite is one process); and each change is in the audit log.

type Json = any;

describeEachTarget("workspace members over HTTP (%s)", (target) => {
  let server: TestServer;
  let replica: TestServer | undefined;
  let ana: UserWithKey;
  let ben: UserWithKey;
  let cy: UserWithKey;
  let anaDash: Record<string, string>;
  let benDash: Record<string, string>;
  let ws: string;

  const call = async (s: TestServer, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const r = await fetch(`${s.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };
  const as = (headers: Record<string, string>) => ({
    get: (path: string) => call(server, "GET", path, headers),
    post: (path: string, body?: unknown) => call(server, "POST", path, headers, body ?? {}),
    patch: (path: string, body: unknown) => call(server, "PATCH", path, headers, body),
    del: (path: string) => call(server, "DELETE", path, headers),
  });
  const signIn = async (email: string, password: string) => {
    const r = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });
    expect(r.status).toBe(200);
    const { csrf_token } = (await r.json()) as { csrf_token: string };
    return { cookie: r.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": csrf_token };
  };
  const me = async (s: TestServer, key: string) => {
    const r = await call(s, "GET", "/v1/me", bearer(key));
    return { status: r.status, code: r.body?.error?.code ?? null };
  };

  beforeAll(async () => {
    const env = { API_KEY_CACHE_TTL_S: "60", PUBLIC_URL: "https://builder.hospital.example/", ...limiterEnv(target) };
    server = await startTestServer(target, env);
    if (target === "postgres") replica = await startTestServer("pglite", { ...env, DATABASE_URL: server.services.config.DATABASE_URL! });
    [ana, ben, cy] = [await createUserWithKey(server), await createUserWithKey(server), await createUserWithKey(server)];
    anaDash = await signIn(ana.email, ana.password);
    benDash = await signIn(ben.email, ben.password);
  });
  afterAll(async () => {
    await replica?.teardown();
    await server?.teardown();
  });

  it("creates a workspace whose creator is its owner, listed after the personal one", async () => {
    const made = await as(anaDash).post("/v1/workspaces", { name: "  Cardiology  " });
    expect(made).toMatchObject({ status: 201, body: { name: "Cardiology", role: "owner", personal: false, members: 1 } });
    ws = made.body.id;
    const mine = (await as(anaDash).get("/v1/workspaces")).body.data as Array<{ name: string; role: string; personal: boolean }>;
    expect(mine.map((w) => [w.personal, w.role, w.name])).toEqual([
      [true, "owner", "Personal"],
      [false, "owner", "Cardiology"],
    ]);
    expect((await as(anaDash).post("/v1/workspaces", { name: "   " })).status).toBe(400);
    // An API key cannot make or list workspaces: these are the dashboard's (a leaked key must not entrench itself).
    expect((await call(server, "GET", "/v1/workspaces", bearer(ana.key))).status).toBe(401);
  });

  it("adds an existing account at once; outsiders get 404 workspace_not_found; a viewer may list but not manage", async () => {
    const added = await as(anaDash).post(`/v1/workspaces/${ws}/members`, { email: ben.email.toUpperCase(), role: "viewer" });
    expect(added).toMatchObject({ status: 201, body: { status: "added", member: { email: ben.email, role: "viewer" }, invitation: null } });
    expect((await as(anaDash).post(`/v1/workspaces/${ws}/members`, { email: ben.email, role: "editor" })).body.error.code).toBe(
      "already_member",
    );
    const list = await as(benDash).get(`/v1/workspaces/${ws}/members`);
    expect(list.body.data.map((m: Json) => [m.email, m.role])).toEqual([
      [ana.email, "owner"],
      [ben.email, "viewer"],
    ]);
    expect(list.body.data[1].joined_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Each member's list carries what their role allows there, so the dashboard can hide what would be a 403.
    const permissionsIn = async (dash: Record<string, string>) =>
      (await as(dash).get("/v1/workspaces")).body.data.find((w: Json) => w.id === ws).permissions;
    expect(await permissionsIn(benDash)).toEqual(["experiment.read"]);
    expect(await permissionsIn(anaDash)).toEqual(expect.arrayContaining(["experiment.delete", "members.manage", "workspace.delete"]));
    expect(await as(benDash).patch(`/v1/workspaces/${ws}/members/${ben.userId}`, { role: "owner" })).toMatchObject({
      status: 403,
      body: { error: { code: "missing_permission_members_manage" } },
    });
    expect((await as(benDash).patch(`/v1/workspaces/${ws}`, { name: "Mine now" })).body.error.code).toBe(
      "missing_permission_workspace_rename",
    );
    const cyDash = await signIn(cy.email, cy.password);
    for (const path of [`/v1/workspaces/${ws}/members`, "/v1/workspaces/not-a-uuid/members", `/v1/workspaces/${cy.userId}/members`]) {
      expect(await as(cyDash).get(path)).toMatchObject({ status: 404, body: { error: { code: "workspace_not_found" } } });
    }
    expect((await as(cyDash).post(`/v1/workspaces/${ws}/members`, { email: cy.email, role: "owner" })).body.error.code).toBe(
      "workspace_not_found",
    );
  });

  it("invites an unknown address: the link is shown, and accepting it creates the account and the membership", async () => {
    const email = `dora-${ws.slice(0, 8)}@hospital.example`;
    const invited = await as(anaDash).post(`/v1/workspaces/${ws}/members`, { email, role: "editor" });
    expect(invited).toMatchObject({ status: 201, body: { status: "invited", member: null, invitation: { email, role: "editor" } } });
    const { token, url, path } = invited.body.invitation;
    expect(url).toBe(`https://builder.hospital.example${path}`);
    expect(path).toBe(`/invite#${token}`);
    const password = "a long enough password";
    const accepted = await call(server, "POST", "/v1/invitations/accept", {}, { token, email, password });
    expect(accepted).toMatchObject({ status: 201, body: { email, role: "member" } });
    const doraDash = await signIn(email, password);
    const mine = (await as(doraDash).get("/v1/workspaces")).body.data as Json[];
    expect(mine.map((w) => [w.name, w.role])).toEqual([
      ["Personal", "owner"],
      ["Cardiology", "editor"],
    ]);
    // The link is spent: a second use creates nothing.
    expect((await call(server, "POST", "/v1/invitations/accept", {}, { token, email: `x${email}`, password })).status).toBe(410);
    // Dora leaves; her workspace list no longer has it, and its members are hidden from her again.
    expect(await as(doraDash).post(`/v1/workspaces/${ws}/leave`)).toMatchObject({ status: 200, body: { api_keys_revoked: 0 } });
    expect((await as(doraDash).get(`/v1/workspaces/${ws}/members`)).status).toBe(404);
  });

  it("changes a role; the last owner can neither be demoted, nor leave, nor be removed (409 last_owner)", async () => {
    expect((await as(anaDash).patch(`/v1/workspaces/${ws}/members/${ben.userId}`, { role: "editor" })).status).toBe(204);
    const bens = (await as(benDash).get(`/v1/workspaces`)).body.data.find((w: Json) => w.id === ws);
    expect(bens.role).toBe("editor");
    expect(bens.permissions).toEqual([
      "experiment.read",
      "experiment.build",
      "experiment.delete",
      "dataset.upload",
      "dataset.delete",
      "batch.run",
      "operating_point.set",
    ]);
    for (const r of [
      await as(anaDash).patch(`/v1/workspaces/${ws}/members/${ana.userId}`, { role: "viewer" }),
      await as(anaDash).post(`/v1/workspaces/${ws}/leave`),
      await as(anaDash).del(`/v1/workspaces/${ws}/members/${ana.userId}`),
    ]) {
      expect(r).toMatchObject({ status: 409, body: { error: { code: "last_owner" } } });
    }
    expect((await as(anaDash).patch(`/v1/workspaces/${ws}/members/${ben.userId}`, { role: "boss" })).status).toBe(400);
    expect(await as(anaDash).patch(`/v1/workspaces/${ws}`, { name: "Cardiology research" })).toMatchObject({
      status: 200,
      body: { name: "Cardiology research", role: "owner", members: 2 },
    });
  });

  it("removing a member revokes the keys they made in the workspace at once (a replica that cached one too); their other keys stay", async () => {
    const { key: wsKey } = await server.services.auth.apiKeys.create(ben.userId, {
      name: "ward program",
      workspaceId: ws,
      scopes: ["read"],
    });
    expect(await me(server, wsKey)).toMatchObject({ status: 200 });
    if (replica) {
      expect(await me(replica, wsKey)).toMatchObject({ status: 200 });
      expect(replica.services.auth.apiKeys.cache.get(sha256Hex(wsKey))).toBeTruthy(); // the replica serves it from its cache
    }
    expect(await as(anaDash).del(`/v1/workspaces/${ws}/members/${ben.userId}`)).toMatchObject({
      status: 200,
      body: { api_keys_revoked: 1 },
    });
    expect(await me(server, wsKey)).toMatchObject({ status: 403, code: "api_key_revoked" });
    if (replica) {
      const t0 = Date.now();
      let answer = await me(replica, wsKey);
      while (answer.status === 200 && Date.now() - t0 < 5_000) {
        await new Promise((r) => setTimeout(r, 5));
        answer = await me(replica, wsKey);
      }
      expect(answer).toMatchObject({ status: 403, code: "api_key_revoked" });
      expect(Date.now() - t0).toBeLessThan(5_000); // the cache TTL is 60 s: only the revocation channel explains this
    }
    expect(await me(server, ben.key)).toMatchObject({ status: 200 }); // his personal workspace's key is not this workspace's
    expect((await as(benDash).get(`/v1/workspaces/${ws}/members`)).body.error.code).toBe("workspace_not_found");
  });

  it("records each change in the audit log, in the workspace, with ids only", async () => {
    const rows = (await server.services.db.execute(
      sql`select action, target, details from audit_events where workspace_id = ${ws} order by seq`,
    )) as unknown as { rows?: Json[] } & Json[];
    const entries: Json[] = rows.rows ?? rows;
    expect(entries.map((e) => e.action)).toEqual([
      "workspace_created",
      "member_added",
      "member_invited",
      "member_added",
      "member_left",
      "member_role_changed",
      "workspace_renamed",
      "member_removed",
    ]);
    expect(entries.find((e) => e.action === "member_role_changed").details).toMatchObject({ from: "viewer", to: "editor" });
    expect(entries.find((e) => e.action === "member_removed").details).toMatchObject({ api_keys_revoked: 1 });
    expect(JSON.stringify(entries)).not.toContain("Cardiology");
  });
});
