import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { apiKeys, users } from "../db/schema.js";
import { ApiError, msg, detail } from "../errors.js";
import { ApiKeyCache } from "./api-key-cache.js";
import type { Role } from "./user.service.js";
import { DISPLAY_PREFIX_LENGTH, generateApiKey, looksLikeApiKey, sha256Hex } from "./secrets.js";

export interface ApiKeyInfo {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  rateLimitPerMinute: number | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** What authentication needs about a presented key: the key and its owner, in one query. */
export interface KeyLookup extends ApiKeyInfo {
  email: string;
  role: Role;
  /** The owner's account is disabled: the key is refused (users' trigger in migration 0009 drops cached copies). */
  userDisabled: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** last_used_at is written at most this often per key, so the hot path stays one SELECT. */
const TOUCH_INTERVAL_MS = 60_000;

const publicColumns = {
  id: apiKeys.id,
  userId: apiKeys.userId,
  name: apiKeys.name,
  prefix: apiKeys.prefix,
  rateLimitPerMinute: apiKeys.rateLimitPerMinute,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  revokedAt: apiKeys.revokedAt,
};

export class ApiKeyService {
  private readonly lastTouched = new Map<string, number>();
  private readonly pendingTouches = new Set<Promise<unknown>>();

  /** Lookups by key hash; see ApiKeyCache for when it is trusted. Disabled until a listener enables it. */
  readonly cache: ApiKeyCache<KeyLookup>;

  constructor(
    private readonly db: Db,
    cacheTtlMs = 0,
  ) {
    this.cache = new ApiKeyCache<KeyLookup>(cacheTtlMs);
  }

  /** Creates a key; the secret is returned here and never again (only its SHA-256 is stored). */
  async create(
    userId: string,
    opts: { name?: string; rateLimitPerMinute?: number | null } = {},
  ): Promise<{ key: string; info: ApiKeyInfo }> {
    const limit = opts.rateLimitPerMinute ?? null;
    if (limit !== null && (!Number.isInteger(limit) || limit < 1)) {
      throw new ApiError(400, "invalid_request", msg("auth.rate_limit_not_integer"), [
        detail("rate_limit_per_minute", msg("detail.integer_at_least_1")),
      ]);
    }
    const key = generateApiKey();
    const [row] = await this.db
      .insert(apiKeys)
      .values({
        userId,
        name: opts.name?.trim() || "default",
        prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
        keyHash: sha256Hex(key),
        rateLimitPerMinute: limit,
      })
      .returning(publicColumns);
    return { key, info: row };
  }

  /** A user's keys, newest first, revoked ones included (the dashboard shows them greyed out). */
  async list(userId: string): Promise<ApiKeyInfo[]> {
    return this.db.select(publicColumns).from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(desc(apiKeys.createdAt));
  }

  /** Looks a presented key up by its hash; revoked keys are returned too (the caller answers 403). */
  async lookup(key: string): Promise<KeyLookup | undefined> {
    if (!looksLikeApiKey(key)) return undefined;
    const hash = sha256Hex(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const generation = this.cache.begin();
    const [row] = await this.db
      .select({
        ...publicColumns,
        email: users.email,
        role: sql<Role>`${users.role}`,
        userDisabled: sql<boolean>`${users.disabledAt} is not null`,
      })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(eq(apiKeys.keyHash, hash));
    // Unknown keys are not cached: a flood of made-up keys must not push real ones out.
    if (row) this.cache.put(hash, row, generation);
    return row;
  }

  /**
   * Revokes a key given its id or the key itself; `userId` restricts to one user's keys (HTTP), none = operator (CLI).
   * Idempotent: revoking a revoked key returns it unchanged. Unknown (or another user's) key -> 404.
   */
  async revoke(idOrKey: string, userId?: string): Promise<ApiKeyInfo> {
    const byKey = idOrKey.startsWith("bld_");
    if (!byKey && !UUID.test(idOrKey)) throw new ApiError(404, "not_found", msg("auth.api_key_not_found"));
    const match = byKey ? eq(apiKeys.keyHash, sha256Hex(idOrKey)) : eq(apiKeys.id, idOrKey);
    const where = userId ? and(match, eq(apiKeys.userId, userId)) : match;
    const [updated] = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(where, isNull(apiKeys.revokedAt)))
      .returning({ ...publicColumns, keyHash: apiKeys.keyHash });
    if (updated) {
      // This process refuses the key from its very next request, before the notification comes back round.
      const { keyHash, ...info } = updated;
      this.cache.invalidate(keyHash);
      return info;
    }
    const [existing] = await this.db.select(publicColumns).from(apiKeys).where(where);
    if (!existing) throw new ApiError(404, "not_found", msg("auth.api_key_not_found"));
    return existing;
  }

  /** How many of a user's keys still work (the password-reset page says so before the reset). */
  async countActive(userId: string): Promise<number> {
    const [{ n }] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(apiKeys)
      .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)));
    return Number(n);
  }

  /**
   * Revokes every working key of a user at once (a password reset that asks for it: a new password alone leaves
   * them working). Returns how many were revoked; this process forgets them now, the others by the trigger.
   */
  async revokeAllOf(userId: string): Promise<number> {
    const rows = await this.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
      .returning({ keyHash: apiKeys.keyHash });
    for (const { keyHash } of rows) this.cache.invalidate(keyHash);
    return rows.length;
  }

  /** Drops a user's keys from this process's cache now (the others hear it from the users table's trigger). */
  async forgetCachedKeysOf(userId: string): Promise<void> {
    const rows = await this.db.select({ keyHash: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.userId, userId));
    for (const { keyHash } of rows) this.cache.invalidate(keyHash);
  }

  /** Records use without slowing the request: at most once a minute per key, not awaited. */
  touch(keyId: string, now = Date.now()): void {
    const last = this.lastTouched.get(keyId) ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    const p = this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(apiKeys.id, keyId))
      .then(
        () => undefined,
        () => this.lastTouched.delete(keyId), // try again on the next request
      )
      .finally(() => this.pendingTouches.delete(p));
    this.pendingTouches.add(p);
  }

  /** Lets pending last_used_at writes land before the database closes. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pendingTouches]);
  }
}
