import { and, asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { users, workspaceMembers, workspaces } from "../db/schema.js";
import type { RequestWorkspace } from "../auth/types.js";
import { isRole, type WorkspaceMember, type WorkspaceRole } from "./permissions.js";
import { workspaceStoragePrefix } from "./storage-prefix.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A workspace as its member sees it in the switcher. */
export interface MyWorkspace {
  id: string;
  name: string;
  personal: boolean;
  role: WorkspaceRole;
  members: number;
  createdAt: Date;
}

/** A member as the members page lists them. */
export interface MemberView extends WorkspaceMember {
  email: string;
  joinedAt: Date;
}

/**
 * The only code that reads the workspaces and workspace_members tables. Personal workspaces are written by the
 * workspaces migration's trigger on users (every new account gets its own in the insert's transaction); shared ones
 * here, by the workspaces API.
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

  /** The workspaces the user belongs to with their role there: their personal one first, then by name. */
  async listForUser(userId: string): Promise<MyWorkspace[]> {
    const rows = await this.db
      .select({
        id: workspaces.id,
        name: workspaces.name,
        personal: sql<boolean>`${workspaces.personalOwnerId} is not null`,
        role: workspaceMembers.role,
        members: sql<number>`(select count(*)::int from ${workspaceMembers} m where m.workspace_id = ${workspaces.id})`,
        createdAt: workspaces.createdAt,
      })
      .from(workspaceMembers)
      .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
      .where(eq(workspaceMembers.userId, userId))
      .orderBy(sql`${workspaces.personalOwnerId} is null`, asc(workspaces.name), asc(workspaces.createdAt));
    return rows.flatMap((r) => (isRole(r.role) ? [{ ...r, role: r.role, members: Number(r.members) }] : []));
  }

  /** A shared workspace and its first owner, in the caller's transaction. */
  async create(name: string, ownerId: string): Promise<{ id: string; name: string; createdAt: Date }> {
    const [row] = await this.db
      .insert(workspaces)
      .values({ name })
      .returning({ id: workspaces.id, name: workspaces.name, createdAt: workspaces.createdAt });
    await this.db.insert(workspaceMembers).values({ workspaceId: row.id, userId: ownerId, role: "owner" });
    return row;
  }

  /** Whose personal workspace this is; null for a shared one. */
  async personalOwnerOf(workspaceId: string): Promise<string | null | undefined> {
    const [row] = await this.db.select({ owner: workspaces.personalOwnerId }).from(workspaces).where(eq(workspaces.id, workspaceId));
    return row?.owner;
  }

  /**
   * Marks a shared workspace for deletion and removes its members in one transaction, so that from here on nobody
   * resolves it (every request naming it is a 404). False when it is personal, unknown, or already marked.
   */
  async markErasing(workspaceId: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const marked = await tx
        .update(workspaces)
        .set({ erasingAt: sql`now()` })
        .where(and(eq(workspaces.id, workspaceId), isNull(workspaces.personalOwnerId), isNull(workspaces.erasingAt)))
        .returning({ id: workspaces.id });
      if (marked.length) await tx.delete(workspaceMembers).where(eq(workspaceMembers.workspaceId, workspaceId));
      return marked.length > 0;
    });
  }

  /**
   * The shared workspaces `userId` is the only owner of while other people are members: erasing them would leave
   * those members without an owner (docs/teams.md, Erasure). By name, for the message that names them.
   */
  async soleOwnedWithOthers(userId: string): Promise<Array<{ id: string; name: string }>> {
    const owners = sql`(select count(*) from ${workspaceMembers} o where o.workspace_id = ${workspaces.id} and o.role = 'owner')`;
    const members = sql`(select count(*) from ${workspaceMembers} x where x.workspace_id = ${workspaces.id})`;
    return this.db
      .select({ id: workspaces.id, name: workspaces.name })
      .from(workspaceMembers)
      .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
      .where(
        and(
          eq(workspaceMembers.userId, userId),
          eq(workspaceMembers.role, "owner"),
          isNull(workspaces.personalOwnerId),
          isNull(workspaces.erasingAt),
          sql`${owners} = 1`,
          sql`${members} > 1`,
        ),
      )
      .orderBy(asc(workspaces.name));
  }

  /** Shared workspaces whose deletion began and is not finished. */
  async erasing(): Promise<Array<{ id: string }>> {
    return this.db.select({ id: workspaces.id }).from(workspaces).where(isNotNull(workspaces.erasingAt));
  }

  /** The last step: the row, and by cascade every row left in the workspace. */
  async deleteErased(workspaceId: string): Promise<void> {
    await this.db.delete(workspaces).where(and(eq(workspaces.id, workspaceId), isNotNull(workspaces.erasingAt)));
  }

  async rename(workspaceId: string, name: string): Promise<void> {
    await this.db.update(workspaces).set({ name }).where(eq(workspaces.id, workspaceId));
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

  /** The members with their e-mail and when they joined, oldest first (the workspace's creator at the top). */
  async list(workspaceId: string): Promise<MemberView[]> {
    const rows = await this.db
      .select({
        workspaceId: workspaceMembers.workspaceId,
        userId: workspaceMembers.userId,
        role: workspaceMembers.role,
        email: users.email,
        joinedAt: workspaceMembers.createdAt,
      })
      .from(workspaceMembers)
      .innerJoin(users, eq(users.id, workspaceMembers.userId))
      .where(eq(workspaceMembers.workspaceId, workspaceId))
      .orderBy(workspaceMembers.createdAt, users.email);
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

  /** Adds a member; false when they already belong (their role is left as it is). */
  async add(workspaceId: string, userId: string, role: WorkspaceMember["role"]): Promise<boolean> {
    const rows = await this.db
      .insert(workspaceMembers)
      .values({ workspaceId, userId, role })
      .onConflictDoNothing()
      .returning({ userId: workspaceMembers.userId });
    return rows.length > 0;
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
