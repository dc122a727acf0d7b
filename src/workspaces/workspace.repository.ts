import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { workspaceMembers, workspaces } from "../db/schema.js";
import type { RequestWorkspace } from "../auth/types.js";
import { isRole, type WorkspaceMember } from "./permissions.js";
import { workspaceStoragePrefix } from "./storage-prefix.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

  /**
   * The workspace a user acts in, with their role there: `workspaceId`, or their personal workspace when none is
   * named. Undefined when they are not a member (or the id is not one): the caller answers 404 workspace_not_found.
   * One query: authentication runs it on every dashboard request.
   */
  async resolve(userId: string, workspaceId?: string): Promise<RequestWorkspace | undefined> {
    if (workspaceId !== undefined && !UUID.test(workspaceId)) return undefined;
    const [row] = await this.db
      .select({ id: workspaces.id, personalOwnerId: workspaces.personalOwnerId, role: workspaceMembers.role })
      .from(workspaceMembers)
      .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
      .where(
        and(
          eq(workspaceMembers.userId, userId),
          workspaceId === undefined ? eq(workspaces.personalOwnerId, userId) : eq(workspaces.id, workspaceId),
        ),
      );
    if (!row || !isRole(row.role)) return undefined;
    return { id: row.id, role: row.role, personal: row.personalOwnerId !== null, storagePrefix: workspaceStoragePrefix(row) };
  }

  /** Where a workspace's objects live in the bucket (jobs and deletions that have only a row's workspace id). */
  async storagePrefix(workspaceId: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ id: workspaces.id, personalOwnerId: workspaces.personalOwnerId })
      .from(workspaces)
      .where(eq(workspaces.id, workspaceId));
    return row ? workspaceStoragePrefix(row) : undefined;
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
