// Issue 50 item 3: the keys page of a shared workspace. An owner (key.manage) sees every member's key with who made
// it, and can revoke any of them (a key a colleague's program leaked must be stoppable by the owner); every other
// role sees and revokes only its own. The revocation is audited: who revoked whose key.
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditEvents, workspaces } from "../../src/db/schema.js";
import { WorkspaceMemberRepository } from "../../src/workspaces/workspace.repository.js";
import { bearer, createUserWithKey, signIn, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

describe("the keys page of a shared workspace: an owner sees and revokes every member's key", () => {
  let server: TestServer;
  let owner: UserWithKey;
  let editor: UserWithKey;
  let viewer: UserWithKey;
  let departed: UserWithKey;
  let shared: string;

  const call = async (method: string, url: string, headers: Record<string, string>) => {
    const res = await fetch(`${server.url}${url}`, { method, headers });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** A key made in the shared workspace by `u` (as a program's key is), with its secret and id. */
  const keyIn = async (u: UserWithKey, name: string) => {
    const { key, info } = await server.services.auth.apiKeys.create(u.userId, { workspaceId: shared, scopes: ["read"], name });
    return { key, id: info.id };
  };
  const readWith = async (key: string) => (await fetch(`${server.url}/v1/experiments`, { headers: bearer(key) })).status;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    [owner, editor, viewer, departed] = await Promise.all([1, 2, 3, 4].map(() => createUserWithKey(server)));
    [{ id: shared }] = await server.services.db.insert(workspaces).values({ name: "Cardiology" }).returning({ id: workspaces.id });
    const members = new WorkspaceMemberRepository(server.services.db);
    await members.add(shared, owner.userId, "owner");
    await members.add(shared, editor.userId, "editor");
    await members.add(shared, viewer.userId, "viewer");
    await members.add(shared, departed.userId, "editor");
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("lists every key of the workspace for its owner, only one's own for another role, never another workspace's", async () => {
    const ownerKey = await keyIn(owner, "hospital-program");
    const editorKey = await keyIn(editor, "editor-notebook");
    const ownerSession = await signIn(server, owner, shared);
    const editorSession = await signIn(server, editor, shared);

    const seen = await call("GET", "/v1/api-keys", ownerSession);
    expect(seen.status).toBe(200);
    expect(seen.body.every_member).toBe(true);
    const byId = new Map<string, any>(seen.body.data.map((k: any) => [k.id, k]));
    expect(byId.get(editorKey.id)).toMatchObject({
      name: "editor-notebook",
      created_by: editor.email,
      created_by_former_member: false,
      made_by_you: false,
      scopes: ["read"],
      revoked_at: null,
    });
    expect(byId.get(ownerKey.id)).toMatchObject({ created_by: owner.email, made_by_you: true });
    // The members' personal keys (made in their personal workspaces) are not the shared workspace's.
    for (const u of [owner, editor, viewer, departed]) expect(byId.has(u.keyId)).toBe(false);

    const own = await call("GET", "/v1/api-keys", editorSession);
    expect(own.body.every_member).toBe(false);
    expect(own.body.data.map((k: any) => k.id)).toEqual([editorKey.id]);
    const none = await call("GET", "/v1/api-keys", await signIn(server, viewer, shared));
    expect(none.body).toMatchObject({ every_member: false, data: [] });
  });

  it("an owner revokes a member's key: refused at once, audited as who revoked whose key", async () => {
    const leaked = await keyIn(editor, "leaked-script");
    expect(await readWith(leaked.key)).toBe(200);
    const ownerSession = await signIn(server, owner, shared);

    const revoked = await call("DELETE", `/v1/api-keys/${leaked.id}`, ownerSession);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    expect(await readWith(leaked.key)).toBe(403);

    const [entry] = await server.services.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "api_key_revoked"), eq(auditEvents.target, `key ${revoked.body.prefix}`)));
    expect(entry).toMatchObject({
      actorId: owner.userId,
      workspaceId: shared,
      via: "session",
      details: { api_key_id: leaked.id, made_by: editor.userId, revoked_for_another_member: true },
    });
  });

  it("another role may not revoke a colleague's key (403 naming the permission); a key of another workspace is a 404", async () => {
    const ownerKey = await keyIn(owner, "owners-program");
    const editorSession = await signIn(server, editor, shared);
    const refused = await call("DELETE", `/v1/api-keys/${ownerKey.id}`, editorSession);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("missing_permission_key_manage");
    expect(await readWith(ownerKey.key)).toBe(200);

    // The editor's personal key is not the shared workspace's: even its owner cannot reach it from here.
    const ownerSession = await signIn(server, owner, shared);
    const elsewhere = await call("DELETE", `/v1/api-keys/${editor.keyId}`, ownerSession);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.code).toBe("not_found");
    expect(await readWith(editor.key)).toBe(200);
    // One's own key of another workspace stays one's own to revoke, as before workspaces.
    const mine = await keyIn(editor, "own-elsewhere");
    expect((await call("DELETE", `/v1/api-keys/${mine.id}`, await signIn(server, editor))).status).toBe(200);
  });

  it("a key of someone who left the workspace shows a former member, without their e-mail", async () => {
    const theirs = await keyIn(departed, "departed-program");
    const ownerSession = await signIn(server, owner, shared);
    expect((await call("DELETE", `/v1/workspaces/${shared}/members/${departed.userId}`, ownerSession)).status).toBe(200);
    const seen = await call("GET", "/v1/api-keys", ownerSession);
    const listed = seen.body.data.find((k: any) => k.id === theirs.id);
    expect(listed).toMatchObject({ created_by: null, created_by_former_member: true });
    expect(listed.revoked_at).not.toBeNull(); // removing a member revoked their keys there
    expect(JSON.stringify(seen.body)).not.toContain(departed.email);
  });
});
