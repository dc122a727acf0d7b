import { and, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { apiKeys, users, workspaceMembers, workspaces } from "../db/schema.js";
import { isRole } from "../workspaces/permissions.js";
import { workspaceStoragePrefix } from "../workspaces/storage-prefix.js";
import type { RequestWorkspace } from "./types.js";
import type { Role } from "./user.repository.js";
import type { KeyScope } from "./key-scopes.js";

export interface ApiKeyInfo {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  rateLimitPerMinute: number | null;
  /** null: a key made before scopes (full access). */
  scopes: KeyScope[] | null;
  /** Experiment ids (decimal strings) a predict key may call; null: any. */
  modelIds: string[] | null;
  expiresAt: Date | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A key as its list shows it: with who made it (api_keys.user_id is the maker). */
export interface ApiKeyListed extends ApiKeyInfo {
  /** The maker's e-mail; null in a workspace's list when they no longer belong to it (a former member). */
  createdByEmail: string | null;
  /** The maker no longer belongs to the key's workspace (removed or left: their keys there were revoked then). */
  makerFormerMember: boolean;
}

/** What authentication needs about a presented key: the key and its owner, in one query. */
export interface KeyLookup extends ApiKeyInfo {
  email: string;
  role: Role;
  /** The owner's account is disabled: the key is refused (users' trigger in migration 0009 drops cached copies). */
  userDisabled: boolean;
  /**
   * The key's workspace with its maker's role there, read in the same query and cached with the key (migration
   * 0026's trigger drops the cached copy when that membership changes); undefined when the maker is no longer a member.
   */
  workspace?: RequestWorkspace;
}

/** Which keys a revocation names: by id or by the key's hash, optionally only one user's. */
export type KeyMatch = { id: string } | { keyHash: string };

const publicColumns = {
  id: apiKeys.id,
  userId: apiKeys.userId,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  rateLimitPerMinute: apiKeys.rateLimitPerMinute,
  scopes: sql<KeyScope[] | null>`${apiKeys.scopes}`,
  modelIds: apiKeys.modelIds,
  expiresAt: apiKeys.expiresAt,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

/** The maker's membership of the key's workspace (none: they left it or were removed). */
const makerMembership = and(eq(workspaceMembers.workspaceId, apiKeys.workspaceId), eq(workspaceMembers.userId, apiKeys.userId));

function matching(match: KeyMatch, userId?: string): SQL | undefined {
  const one = "id" in match ? eq(apiKeys.id, match.id) : eq(apiKeys.keyHash, match.keyHash);
  return userId ? and(one, eq(apiKeys.userId, userId)) : one;
}

/** The only code that touches the api_keys table (only hashes are stored; ApiKeyService makes and checks keys). */
export class ApiKeyRepository {
  constructor(private readonly db: Db) {}

  async insert(values: {
    userId: string;
    name: string;
    prefix: string;
    keyHash: string;
    rateLimitPerMinute: number | null;
    scopes: KeyScope[];
    modelIds: string[] | null;
    expiresAt: Date | null;
    /** none: the maker's personal workspace (the table's trigger). */
    workspaceId?: string;
  }): Promise<ApiKeyInfo> {
    const [row] = await this.db.insert(apiKeys).values(values).returning(publicColumns);
    return row;
  }

  /** A user's keys (in one workspace, when named), newest first, revoked ones included, with who made each. */
  list(userId: string, workspaceId?: string): Promise<ApiKeyListed[]> {
    return this.db
      .select({ ...publicColumns, createdByEmail: users.email, makerFormerMember: sql<boolean>`${workspaceMembers.userId} is null` })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .leftJoin(workspaceMembers, makerMembership)
      .where(and(eq(apiKeys.userId, userId), workspaceId ? eq(apiKeys.workspaceId, workspaceId) : undefined))
      .orderBy(desc(apiKeys.createdAt));
  }

  /**
   * Every key of a workspace, whoever made it (its owners' view), newest first, revoked ones included. The maker's
   * e-mail only while they belong to the workspace: someone who left it is a former member to it, as on experiments.
   */
  listInWorkspace(workspaceId: string): Promise<ApiKeyListed[]> {
    return this.db
      .select({
        ...publicColumns,
        createdByEmail: sql<string | null>`case when ${workspaceMembers.userId} is null then null else ${users.email} end`,
        makerFormerMember: sql<boolean>`${workspaceMembers.userId} is null`,
      })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .leftJoin(workspaceMembers, makerMembership)
      .where(eq(apiKeys.workspaceId, workspaceId))
      .orderBy(desc(apiKeys.createdAt));
  }

  /** The key with this hash and its owner, revoked or not. */
  async byHash(keyHash: string): Promise<KeyLookup | undefined> {
    const [row] = await this.db
      .select({
        ...publicColumns,
        email: users.email,
        role: sql<Role>`${users.role}`,
        userDisabled: sql<boolean>`${users.disabledAt} is not null`,
        workspaceId: workspaces.id,
        personalOwnerId: workspaces.personalOwnerId,
        memberRole: workspaceMembers.role,
      })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .leftJoin(workspaces, eq(workspaces.id, apiKeys.workspaceId))
      .leftJoin(workspaceMembers, and(eq(workspaceMembers.workspaceId, apiKeys.workspaceId), eq(workspaceMembers.userId, apiKeys.userId)))
      .where(eq(apiKeys.keyHash, keyHash));
    if (!row) return undefined;
    const { workspaceId, personalOwnerId, memberRole, ...key } = row;
    const workspace =
      workspaceId && isRole(memberRole)
        ? {
            id: workspaceId,
            role: memberRole,
            personal: personalOwnerId !== null,
            storagePrefix: workspaceStoragePrefix({ id: workspaceId, personalOwnerId }),
          }
        : undefined;
    return { ...key, workspace };
  }

  /** Revokes the key if it is not already; the revoked key with its hash, or undefined when none was changed. */
  async revokeIfActive(match: KeyMatch, userId?: string): Promise<(ApiKeyInfo & { keyHash: string }) | undefined> {
    const [updated] = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(matching(match, userId), isNull(apiKeys.revokedAt)))
      .returning({ ...publicColumns, keyHash: apiKeys.keyHash });
    return updated;
  }

  async find(match: KeyMatch, userId?: string): Promise<ApiKeyInfo | undefined> {
    const [existing] = await this.db.select(publicColumns).from(apiKeys).where(matching(match, userId));
    return existing;
  }

  /** The key with its workspace (null: a key older than workspaces that no trigger placed), to decide who may revoke it. */
  async findWithWorkspace(match: KeyMatch): Promise<(ApiKeyInfo & { workspaceId: string | null }) | undefined> {
    const [existing] = await this.db
      .select({ ...publicColumns, workspaceId: apiKeys.workspaceId })
      .from(apiKeys)
      .where(matching(match));
    return existing;
  }

  async countActive(userId: string): Promise<number> {
    const [{ n }] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(apiKeys)
      .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
    return Number(n);
  }

  /** Revokes every working key of a user; the hashes of those it revoked. */
  async revokeAllOf(userId: string): Promise<string[]> {
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
      .returning({ keyHash: apiKeys.keyHash });
    return rows.map((r) => r.keyHash);
  }

  /** Revokes the working keys a user made in one workspace (they were removed from it); the hashes it revoked. */
  async revokeMadeBy(workspaceId: string, userId: string): Promise<string[]> {
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.workspaceId, workspaceId), eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
      .returning({ keyHash: apiKeys.keyHash });
    return rows.map((r) => r.keyHash);
  }

  async hashesOf(userId: string): Promise<string[]> {
    const rows = await this.db.select({ keyHash: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.userId, userId));
    return rows.map((r) => r.keyHash);
  }

  async setLastUsed(keyId: string, at: Date): Promise<void> {
    await this.db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, keyId));
  }

  /** An erasure deletes the user's keys (the table's trigger drops them from every replica's cache). */
  async deleteAllOf(userId: string): Promise<void> {
    await this.db.delete(apiKeys).where(eq(apiKeys.userId, userId));
  }

  /** A workspace's deletion deletes every key of it, whoever made it (the same trigger tells every replica). */
  async deleteAllIn(workspaceId: string): Promise<void> {
    await this.db.delete(apiKeys).where(eq(apiKeys.workspaceId, workspaceId));
  }
}
