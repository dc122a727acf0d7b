// Who belongs to a workspace (issue 50 item 2): list, change a role, remove, leave. Every change is checked against
// the permissions table, and the last owner can neither leave nor be demoted, so a workspace is never left ownerless.
import type { Db } from "../db/client.js";
import { errors, msg } from "../errors.js";
import { assertAllowed, type WorkspaceMember, type WorkspaceRole } from "./permissions.js";
import { WorkspaceMemberRepository, WorkspaceRepository } from "./workspace.repository.js";

export class MembersService {
  constructor(private readonly db: Db) {}

  /** The actor's membership; a workspace they do not belong to is a 404, as another user's experiment is. */
  private async memberOrNotFound(db: Db, workspaceId: string, userId: string): Promise<WorkspaceMember> {
    const member = await new WorkspaceRepository(db).membership(workspaceId, userId);
    if (!member) throw errors.notFound(msg("workspace.not_found"));
    return member;
  }

  async list(actorId: string, workspaceId: string): Promise<WorkspaceMember[]> {
    assertAllowed(await this.memberOrNotFound(this.db, workspaceId, actorId), "experiment.read");
    return new WorkspaceMemberRepository(this.db).list(workspaceId);
  }

  async changeRole(actorId: string, workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      assertAllowed(await this.memberOrNotFound(db, workspaceId, actorId), "members.manage");
      const target = await new WorkspaceRepository(db).membership(workspaceId, userId);
      if (!target) throw errors.notFound(msg("workspace.member_not_found"));
      if (target.role === "owner" && role !== "owner") await this.refuseIfLastOwner(db, workspaceId);
      await new WorkspaceMemberRepository(db).setRole(workspaceId, userId, role);
    });
  }

  /** Removes a member; a member removing themselves is leaving, which needs no permission. */
  async remove(actorId: string, workspaceId: string, userId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      const actor = await this.memberOrNotFound(db, workspaceId, actorId);
      if (actorId !== userId) assertAllowed(actor, "members.manage");
      const target = await new WorkspaceRepository(db).membership(workspaceId, userId);
      if (!target) throw errors.notFound(msg("workspace.member_not_found"));
      if (target.role === "owner") await this.refuseIfLastOwner(db, workspaceId);
      await new WorkspaceMemberRepository(db).remove(workspaceId, userId);
    });
  }

  private async refuseIfLastOwner(db: Db, workspaceId: string): Promise<void> {
    const owners = await new WorkspaceMemberRepository(db).lockOwners(workspaceId);
    if (owners.length <= 1) throw errors.conflict(msg("workspace.last_owner"), "last_owner");
  }
}
