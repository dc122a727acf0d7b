import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { workspaceMembers, workspaces } from "../db/schema.js";
import { isRole, type WorkspaceMember } from "./permissions.js";

/**
 * The only code that reads the workspaces and workspace_members tables. Rows are written, for now, only by the
 * workspaces migration and its trigger on users (every new account gets its personal workspace in the insert's
 * transaction); the members API will write them here.
 */
export class WorkspaceRepository {
  constructor(private readonly db: Db) {}

  async personalWorkspaceId(userId: string): Promise<string | undefined> {
    const [row] = await this.db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.personalOwnerId, userId));
    return row?.id;
  }

  /** Whether the workspace asks for a second pair of eyes before a version serves others (false when it is gone). */
  async requireApproval(workspaceId: string): Promise<boolean> {
    const [row] = await this.db.select({ on: workspaces.requireApproval }).from(workspaces).where(eq(workspaces.id, workspaceId));
    return row?.on ?? false;
  }

  /** Sets the workspace's approval setting (its owner decides: WorkspaceSettingsService). */
  async setRequireApproval(workspaceId: string, on: boolean): Promise<void> {
    await this.db.update(workspaces).set({ requireApproval: on }).where(eq(workspaces.id, workspaceId));
  }

  /** The user's membership of the workspace, or undefined when they do not belong to it (the caller answers 404). */
  async membership(workspaceId: string, userId: string): Promise<WorkspaceMember | undefined> {
    const [row] = await this.db
      .select({ workspaceId: workspaceMembers.workspaceId, userId: workspaceMembers.userId, role: workspaceMembers.role })
      .from(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId)));
    if (!row || !isRole(row.role)) return undefined;
    return { ...row, role: row.role };
  }
}

/** Writes of workspace_members: the members service's one way to change who belongs and with which role. */
export class WorkspaceMemberRepository {
  constructor(private readonly db: Db) {}

  async list(workspaceId: string): Promise<WorkspaceMember[]> {
    const rows = await this.db
      .select({ workspaceId: workspaceMembers.workspaceId, userId: workspaceMembers.userId, role: workspaceMembers.role })
      .from(workspaceMembers)
      .where(eq(workspaceMembers.workspaceId, workspaceId))
      .orderBy(workspaceMembers.createdAt);
    return rows.flatMap((r) => (isRole(r.role) ? [{ ...r, role: r.role }] : []));
  }

  /**
   * The owners' rows, locked until the transaction ends: two owners demoting each other at once are serialised, so
   * the second sees that it would leave none.
   */
  async lockOwners(workspaceId: string): Promise<string[]> {
    const rows = await this.db
      .select({ userId: workspaceMembers.userId })
      .from(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.role, "owner")))
      .for("update");
    return rows.map((r) => r.userId);
  }

  async add(workspaceId: string, userId: string, role: WorkspaceMember["role"]): Promise<void> {
    await this.db.insert(workspaceMembers).values({ workspaceId, userId, role });
  }

  async setRole(workspaceId: string, userId: string, role: WorkspaceMember["role"]): Promise<void> {
    await this.db
      .update(workspaceMembers)
      .set({ role })
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId)));
  }

  async remove(workspaceId: string, userId: string): Promise<void> {
    await this.db.delete(workspaceMembers).where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.userId, userId)));
  }
}
