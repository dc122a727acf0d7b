// Who belongs to a workspace (issue 50 item 2): list, add or invite, change a role, remove, leave. Every change is
// checked against the permissions table, and the last owner can neither leave nor be demoted, so a workspace is
// never left ownerless. A member who goes (removed or leaving) takes the API keys they made there with them.
import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { IssuedLink } from "../auth/admin.service.js";
import type { ApiKeyService } from "../auth/api-key.service.js";
import { UserRepository } from "../auth/user.repository.js";
import { emailSchema, normaliseEmail } from "../auth/user.service.js";
import type { Db } from "../db/client.js";
import { ApiError, detail, errors, msg } from "../errors.js";
import { assertAllowed, isRole, type WorkspaceMember, type WorkspaceRole } from "./permissions.js";
import { WorkspaceMemberRepository, WorkspaceRepository, type MemberView } from "./workspace.repository.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The actor's membership; a workspace they do not belong to (or no workspace at all) is a 404
 * `workspace_not_found`, as another user's experiment is: its existence is not revealed.
 */
export async function memberOrNotFound(db: Db, workspaceId: string, userId: string): Promise<WorkspaceMember> {
  const member = UUID.test(workspaceId) ? await new WorkspaceRepository(db).membership(workspaceId, userId) : undefined;
  if (!member) throw new ApiError(404, "workspace_not_found", msg("workspace.not_found"));
  return member;
}

export type { MemberView } from "./workspace.repository.js";

/** What adding someone did: an account existed and is a member now, or an invitation link was made for the address. */
export type AddOutcome = { added: MemberView } | { invited: IssuedLink & { email: string; role: WorkspaceRole } };

export interface MembersDeps {
  db: Db;
  apiKeys: Pick<ApiKeyService, "revokeMadeBy">;
  audit: Pick<AuditLog, "record">;
  /** Makes a workspace invitation link (AdminService.inviteToWorkspace): accepting it creates the account and the membership. */
  invite: (actor: AuditActor, input: { email: string; workspaceId: string; workspaceRole: WorkspaceRole }) => Promise<IssuedLink>;
}

export class MembersService {
  private readonly db: Db;

  constructor(private readonly deps: MembersDeps) {
    this.db = deps.db;
  }

  async list(actorId: string, workspaceId: string): Promise<MemberView[]> {
    assertAllowed(await memberOrNotFound(this.db, workspaceId, actorId), "experiment.read");
    return new WorkspaceMemberRepository(this.db).list(workspaceId);
  }

  /**
   * Adds the person with this e-mail: an existing account joins at once; an address with no account gets an
   * invitation link (Builder sends no e-mail: the inviter passes it on), whose acceptance creates both.
   */
  async add(actor: AuditActor, workspaceId: string, input: { email: string; role: WorkspaceRole }): Promise<AddOutcome> {
    assertAllowed(await memberOrNotFound(this.db, workspaceId, actor.userId), "members.manage");
    if (!isRole(input.role)) throw errors.invalidRequest(msg("workspace.unknown_role"), [detail("role", msg("workspace.unknown_role"))]);
    const email = normaliseEmail(input.email);
    if (!emailSchema.safeParse(email).success) {
      throw errors.invalidRequest(msg("detail.invalid_email"), [detail("email", msg("detail.invalid_email"))]);
    }
    const user = await new UserRepository(this.db).findByEmail(email);
    const inWorkspace = { ...actor, workspaceId };
    if (!user) {
      const link = await this.deps.invite(actor, { email, workspaceId, workspaceRole: input.role });
      await this.deps.audit.record(inWorkspace, "member_invited", `invitation ${link.link.id}`, { role: input.role });
      return { invited: { ...link, email, role: input.role } };
    }
    if (!(await new WorkspaceMemberRepository(this.db).add(workspaceId, user.id, input.role))) {
      throw errors.conflict(msg("workspace.already_member", { email }), "already_member");
    }
    await this.deps.audit.record(inWorkspace, "member_added", `user ${user.id}`, { role: input.role });
    const added = (await new WorkspaceMemberRepository(this.db).list(workspaceId)).find((m) => m.userId === user.id)!;
    return { added };
  }

  async changeRole(who: AuditActor, workspaceId: string, userId: string, role: WorkspaceRole): Promise<void> {
    if (!isRole(role)) throw errors.invalidRequest(msg("workspace.unknown_role"), [detail("role", msg("workspace.unknown_role"))]);
    const from = await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      assertAllowed(await memberOrNotFound(db, workspaceId, who.userId), "members.manage");
      const target = await this.targetOf(db, workspaceId, userId);
      if (target.role === "owner" && role !== "owner") await this.refuseIfLastOwner(db, workspaceId, userId);
      await new WorkspaceMemberRepository(db).setRole(workspaceId, userId, role);
      return target.role;
    });
    if (from !== role) {
      await this.deps.audit.record({ ...who, workspaceId }, "member_role_changed", `user ${userId}`, { from, to: role });
    }
  }

  /**
   * Removes a member (a member removing themselves is leaving, which needs no permission) and revokes the API keys
   * they made in this workspace in the same transaction: every replica refuses them from the commit on.
   */
  async remove(who: AuditActor, workspaceId: string, userId: string): Promise<{ apiKeysRevoked: number }> {
    const leaving = who.userId === userId;
    const apiKeysRevoked = await this.db.transaction(async (tx) => {
      const db = tx as unknown as Db;
      const member = await memberOrNotFound(db, workspaceId, who.userId);
      if (!leaving) assertAllowed(member, "members.manage");
      const target = await this.targetOf(db, workspaceId, userId);
      if (target.role === "owner") await this.refuseIfLastOwner(db, workspaceId, userId);
      await new WorkspaceMemberRepository(db).remove(workspaceId, userId);
      return this.deps.apiKeys.revokeMadeBy(workspaceId, userId, db);
    });
    await this.deps.audit.record({ ...who, workspaceId }, leaving ? "member_left" : "member_removed", `user ${userId}`, {
      api_keys_revoked: apiKeysRevoked,
    });
    return { apiKeysRevoked };
  }

  leave(actor: AuditActor, workspaceId: string): Promise<{ apiKeysRevoked: number }> {
    return this.remove(actor, workspaceId, actor.userId);
  }

  private async targetOf(db: Db, workspaceId: string, userId: string): Promise<WorkspaceMember> {
    const target = UUID.test(userId) ? await new WorkspaceRepository(db).membership(workspaceId, userId) : undefined;
    if (!target) throw errors.notFound(msg("workspace.member_not_found"));
    return target;
  }

  /**
   * Refuses to take `userId`'s ownership away when they are the only owner. A personal workspace stays its owner's
   * too: it goes with their account (erasure), so they can neither leave it nor be demoted in it.
   */
  private async refuseIfLastOwner(db: Db, workspaceId: string, userId: string): Promise<void> {
    const owners = await new WorkspaceMemberRepository(db).lockOwners(workspaceId);
    if (owners.length <= 1) throw errors.conflict(msg("workspace.last_owner"), "last_owner");
    if ((await new WorkspaceRepository(db).personalOwnerOf(workspaceId)) === userId) {
      throw errors.conflict(msg("workspace.personal_owner"), "personal_workspace_owner");
    }
  }
}
