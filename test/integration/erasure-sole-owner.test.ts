// Issue 50 item 6, the gap it left: erasing the only owner of a shared workspace that others still use would leave
// it ownerless. Builder refuses, naming the workspaces, and erases nothing (docs/teams.md, Erasure) — through
// DELETE /v1/me and through `./builder users erase` (directOps) alike. Once ownership is handed over, it erases.
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { directOps } from "../../src/auth/admin-ops.js";
import { AdminRepository } from "../../src/auth/admin.repository.js";
import { users, workspaces } from "../../src/db/schema.js";
import { WorkspaceMemberRepository } from "../../src/workspaces/workspace.repository.js";
import { bearer, createUserWithKey, signIn, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { waitFor } from "./experiments-fixtures.js";

describe("erasing the only owner of a shared workspace with other members", () => {
  let server: TestServer;
  let owner: UserWithKey;
  let colleague: UserWithKey;
  let shared: string;

  const eraseMe = async (u: UserWithKey, language = "en") => {
    const res = await fetch(`${server.url}/v1/me`, {
      method: "DELETE",
      headers: { ...(await signIn(server, u)), "accept-language": language },
      body: JSON.stringify({ password: u.password }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const cli = () => {
    const { db, auth, audit } = server.services;
    return directOps(auth.users, auth.apiKeys, new AdminRepository(db), audit);
  };
  const accountExists = async (u: UserWithKey) =>
    (await server.services.db.select({ id: users.id }).from(users).where(eq(users.id, u.userId))).length > 0;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    [owner, colleague] = await Promise.all([createUserWithKey(server), createUserWithKey(server)]);
    [{ id: shared }] = await server.services.db.insert(workspaces).values({ name: "Neonatal unit" }).returning({ id: workspaces.id });
    const members = new WorkspaceMemberRepository(server.services.db);
    await members.add(shared, owner.userId, "owner");
    await members.add(shared, colleague.userId, "viewer");
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("is refused with the workspace named, in English and Spanish, and nothing is erased", async () => {
    const refused = await eraseMe(owner);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("sole_owner_of_shared_workspace");
    expect(refused.body.error.message).toContain("“Neonatal unit”");
    expect(refused.body.error.message).toMatch(/^nothing was erased/);
    expect(refused.body.error.details).toEqual({ workspaces: [{ id: shared, name: "Neonatal unit" }] });
    const spanish = await eraseMe(owner, "es");
    expect(spanish.body.error.message).toMatch(/^no se ha borrado nada: .*“Neonatal unit”/);

    // The CLI's path is refused the same way.
    await expect(cli().markForErasure({ email: owner.email })).rejects.toMatchObject({ code: "sole_owner_of_shared_workspace" });

    // Nothing happened: the account, its key, its sessions and the workspace's members are as they were.
    expect(await accountExists(owner)).toBe(true);
    const [row] = await server.services.db.select({ erasing: users.erasingAt }).from(users).where(eq(users.id, owner.userId));
    expect(row.erasing).toBeNull();
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(owner.key) })).status).toBe(200);
    const members = await new WorkspaceMemberRepository(server.services.db).list(shared);
    expect(members.map((m) => [m.userId, m.role])).toEqual([
      [owner.userId, "owner"],
      [colleague.userId, "viewer"],
    ]);
  });

  it("a member who is not the only owner is erased as before; once another owner is named, so is the first", async () => {
    // The colleague (a viewer) is not refused: the workspace keeps its owner.
    expect((await eraseMe(colleague)).status).toBe(202);
    await waitFor("the colleague's erasure", async () => !(await accountExists(colleague)), 30_000, 200);
    // Now the owner is alone in the workspace: erasing them leaves no member without an owner.
    const third = await createUserWithKey(server);
    const members = new WorkspaceMemberRepository(server.services.db);
    await members.add(shared, third.userId, "owner"); // ownership handed over
    expect((await eraseMe(owner)).status).toBe(202);
    await waitFor("the owner's erasure", async () => !(await accountExists(owner)), 30_000, 200);
    expect((await members.list(shared)).map((m) => [m.userId, m.role])).toEqual([[third.userId, "owner"]]);
  });
});
