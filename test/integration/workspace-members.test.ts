// The members service on a real database (PGlite): the permissions table decides, and the last owner stays.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.js";
import { ApiKeyService } from "../../src/auth/api-key.service.js";
import { UserRepository } from "../../src/auth/user.repository.js";
import { createLogger } from "../../src/logger.js";
import { openDatabase, type Database } from "../../src/db/client.js";
import { MembersService } from "../../src/workspaces/members.service.js";
import { PermissionDeniedError } from "../../src/workspaces/permissions.js";
import { WorkspaceMemberRepository, WorkspaceRepository } from "../../src/workspaces/workspace.repository.js";
import { describeEachTarget, createThrowawayDatabase } from "../helpers/db.js";

const as = (userId: string) => ({ userId, via: "session" as const });

describeEachTarget("workspace members on %s", (target) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-members-"));
  let database: Database;
  let drop: (() => Promise<void>) | undefined;
  let ana: string, ben: string, cy: string, ws: string, personal: string;
  let members: MembersService;
  beforeAll(async () => {
    const throwaway = target === "postgres" ? await createThrowawayDatabase() : undefined;
    drop = throwaway?.drop;
    database = await openDatabase({ url: throwaway?.url, dataDir });
    await database.migrate();
    const users = new UserRepository(database.db);
    ana = (await users.insert({ email: "ana@example.org", passwordHash: "x", role: "member" })).id;
    ben = (await users.insert({ email: "ben@example.org", passwordHash: "x", role: "member" })).id;
    cy = (await users.insert({ email: "cy@example.org", passwordHash: "x", role: "member" })).id;
    personal = (await new WorkspaceRepository(database.db).personalWorkspaceId(ana))!;
    ws = (await new WorkspaceRepository(database.db).create("Team", ana)).id;
    await new WorkspaceMemberRepository(database.db).add(ws, ben, "viewer");
    members = new MembersService({
      db: database.db,
      apiKeys: new ApiKeyService(database.db),
      audit: new AuditLog({ db: database.db, logger: createLogger("silent") }),
      invite: () => Promise.reject(new Error("no invitations in this test")),
    });
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("gives every new user a personal workspace they own, and the creator of a shared one is its owner", async () => {
    expect(personal).toBeTruthy();
    expect(await new WorkspaceRepository(database.db).membership(personal, ana)).toMatchObject({ role: "owner" });
    expect(await new WorkspaceRepository(database.db).membership(ws, ana)).toMatchObject({ role: "owner" });
  });

  it("keeps a personal workspace's owner an owner of it even when it has a second owner", async () => {
    await new WorkspaceMemberRepository(database.db).add(personal, cy, "owner");
    await expect(members.remove(as(ana), personal, ana)).rejects.toMatchObject({ status: 409, code: "personal_workspace_owner" });
    await expect(members.changeRole(as(cy), personal, ana, "viewer")).rejects.toMatchObject({ code: "personal_workspace_owner" });
    await members.remove(as(ana), personal, cy);
  });

  it("lets members list, hides the workspace from outsiders (404), and lets only an owner change roles", async () => {
    expect((await members.list(ben, ws)).map((m) => [m.userId, m.role])).toEqual([
      [ana, "owner"],
      [ben, "viewer"],
    ]);
    await expect(members.list(cy, ws)).rejects.toMatchObject({ status: 404 });
    await expect(members.changeRole(as(ben), ws, ben, "owner")).rejects.toBeInstanceOf(PermissionDeniedError);
    await members.changeRole(as(ana), ws, ben, "editor");
    expect(await new WorkspaceRepository(database.db).membership(ws, ben)).toMatchObject({ role: "editor" });
  });

  it("refuses to demote or remove the last owner, and allows it once there is a second one", async () => {
    await expect(members.changeRole(as(ana), ws, ana, "editor")).rejects.toMatchObject({ status: 409, code: "last_owner" });
    await expect(members.remove(as(ana), ws, ana)).rejects.toMatchObject({ status: 409, code: "last_owner" });
    await members.changeRole(as(ana), ws, ben, "owner");
    await members.remove(as(ana), ws, ana);
    expect((await members.list(ben, ws)).map((m) => m.userId)).toEqual([ben]);
  });

  it("lets a member leave without a permission, but not remove someone else", async () => {
    await new WorkspaceMemberRepository(database.db).add(ws, cy, "viewer");
    await new WorkspaceMemberRepository(database.db).add(ws, ana, "viewer");
    await expect(members.remove(as(cy), ws, ana)).rejects.toMatchObject({ status: 403, code: "missing_permission_members_manage" });
    await members.remove(as(cy), ws, cy);
    await expect(members.list(cy, ws)).rejects.toMatchObject({ status: 404 });
  });
});
