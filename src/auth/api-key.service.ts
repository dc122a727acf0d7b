import type { Db } from "../db/client.js";
import { ApiError, msg, detail } from "../errors.js";
import { ApiKeyCache } from "./api-key-cache.js";
import { ApiKeyRepository, type ApiKeyInfo, type ApiKeyListed, type KeyLookup } from "./api-key.repository.js";
import { DEFAULT_KEY_SCOPES, normaliseScopes, type KeyScope } from "./key-scopes.js";
import { DISPLAY_PREFIX_LENGTH, generateApiKey, looksLikeApiKey, sha256Hex } from "./secrets.js";
import { assertAllowed, isAllowed, type WorkspaceMember } from "../workspaces/permissions.js";

export type { ApiKeyInfo, ApiKeyListed, KeyLookup } from "./api-key.repository.js";

/** What a new key may do; every field optional (the defaults are the safe ones). */
export interface NewKeyOptions {
  name?: string;
  rateLimitPerMinute?: number | null;
  /** Default ["predict"]: a program that only scores patients. Never empty. */
  scopes?: readonly KeyScope[];
  /** The experiment ids a predict key may call; absent or empty: every model. */
  modelIds?: readonly number[] | null;
  /** When the key stops working (401 api_key_expired); must be in the future. Absent: never. */
  expiresAt?: Date | null;
  /** The workspace the key acts in; absent: its maker's personal workspace (the table's trigger). */
  workspaceId?: string;
  /**
   * The dashboard's workspace, with the maker's role there: the key acts in it, and making one needs key.manage
   * (an owner's; everyone owns their personal workspace, so nothing changes there).
   */
  workspace?: Pick<WorkspaceMember, "role"> & { id: string };
}

/** Who asks, from the dashboard: the user and the workspace they act in, with their role there. */
export interface KeyCaller {
  userId: string;
  workspace: Pick<WorkspaceMember, "role"> & { id: string };
}

/** A workspace's keys as its caller may see them: every member's for an owner (key.manage), else only their own. */
export interface KeysView {
  keys: ApiKeyListed[];
  everyMember: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** last_used_at is written at most this often per key, so the hot path stays one SELECT. */
const TOUCH_INTERVAL_MS = 60_000;

export class ApiKeyService {
  private readonly lastTouched = new Map<string, number>();
  private readonly pendingTouches = new Set<Promise<unknown>>();

  /** Lookups by key hash; see ApiKeyCache for when it is trusted. Disabled until a listener enables it. */
  readonly cache: ApiKeyCache<KeyLookup>;

  private readonly repo: ApiKeyRepository;

  constructor(db: Db, cacheTtlMs = 0) {
    this.repo = new ApiKeyRepository(db);
    this.cache = new ApiKeyCache<KeyLookup>(cacheTtlMs);
  }

  /** Creates a key; the secret is returned here and never again (only its SHA-256 is stored). */
  async create(userId: string, opts: NewKeyOptions = {}, now = new Date()): Promise<{ key: string; info: ApiKeyInfo }> {
    if (opts.workspace) assertAllowed(opts.workspace, "key.manage");
    const limit = opts.rateLimitPerMinute ?? null;
    if (limit !== null && (!Number.isInteger(limit) || limit < 1)) {
      throw new ApiError(400, "invalid_request", msg("auth.rate_limit_not_integer"), [
        detail("rate_limit_per_minute", msg("detail.integer_at_least_1")),
      ]);
    }
    const scopes = normaliseScopes(opts.scopes ?? DEFAULT_KEY_SCOPES);
    if (scopes.length === 0) {
      throw new ApiError(400, "invalid_request", msg("auth.api_key_scopes_empty"), [detail("scopes", msg("detail.required"))]);
    }
    const modelIds = opts.modelIds?.length ? [...new Set(opts.modelIds)].map(String) : null;
    if (modelIds && !scopes.includes("predict")) {
      throw new ApiError(400, "invalid_request", msg("auth.api_key_models_need_predict"), [
        detail("model_ids", msg("auth.api_key_models_need_predict")),
      ]);
    }
    const expiresAt = opts.expiresAt ?? null;
    if (expiresAt && !(expiresAt.getTime() > now.getTime())) {
      throw new ApiError(400, "invalid_request", msg("auth.api_key_expiry_past"), [detail("expires_at", msg("auth.api_key_expiry_past"))]);
    }
    const key = generateApiKey();
    const info = await this.repo.insert({
      userId,
      name: opts.name?.trim() || "default",
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      keyHash: sha256Hex(key),
      rateLimitPerMinute: limit,
      scopes,
      modelIds,
      expiresAt,
      workspaceId: opts.workspace?.id ?? opts.workspaceId,
    });
    return { key, info };
  }

  /** A user's keys (in one workspace, when named), newest first, revoked ones included (the dashboard greys them). */
  async list(userId: string, workspaceId?: string): Promise<ApiKeyListed[]> {
    return this.repo.list(userId, workspaceId);
  }

  /**
   * The keys page (issue 50 item 3): an owner (key.manage) sees every key of the workspace with who made it, so a
   * key a departed colleague's program still holds can be found and stopped; any other role sees only its own.
   */
  async listFor(caller: KeyCaller): Promise<KeysView> {
    if (isAllowed(caller.workspace.role, "key.manage")) {
      return { keys: await this.repo.listInWorkspace(caller.workspace.id), everyMember: true };
    }
    return { keys: await this.repo.list(caller.userId, caller.workspace.id), everyMember: false };
  }

  /**
   * Revokes a key from the dashboard: one's own key (in any workspace, as before), or another member's key of the
   * workspace the caller acts in when their role there may manage keys (assertAllowed key.manage: an owner). Another
   * member's key without that permission is a 403 naming it; a key of another workspace is a 404, as if unknown.
   * Returns the key and who made it (the audit entry says who revoked whose key).
   */
  async revokeFor(idOrKey: string, caller: KeyCaller): Promise<{ info: ApiKeyInfo; madeBy: string }> {
    const byKey = idOrKey.startsWith("bld_");
    if (!byKey && !UUID.test(idOrKey)) throw new ApiError(404, "not_found", msg("auth.api_key_not_found"));
    const existing = await this.repo.findWithWorkspace(byKey ? { keyHash: sha256Hex(idOrKey) } : { id: idOrKey });
    if (!existing) throw new ApiError(404, "not_found", msg("auth.api_key_not_found"));
    if (existing.userId !== caller.userId) {
      if (existing.workspaceId !== caller.workspace.id) throw new ApiError(404, "not_found", msg("auth.api_key_not_found"));
      assertAllowed(caller.workspace, "key.manage");
    }
    return { info: await this.revoke(existing.id), madeBy: existing.userId };
  }

  /** Looks a presented key up by its hash; revoked keys are returned too (the caller answers 403). */
  async lookup(key: string): Promise<KeyLookup | undefined> {
    if (!looksLikeApiKey(key)) return undefined;
    const hash = sha256Hex(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const generation = this.cache.begin();
    const row = await this.repo.byHash(hash);
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
    const match = byKey ? { keyHash: sha256Hex(idOrKey) } : { id: idOrKey };
    const updated = await this.repo.revokeIfActive(match, userId);
    if (updated) {
      // This process refuses the key from its very next request, before the notification comes back round.
      const { keyHash, ...info } = updated;
      this.cache.invalidate(keyHash);
      return info;
    }
    const existing = await this.repo.find(match, userId);
    if (!existing) throw new ApiError(404, "not_found", msg("auth.api_key_not_found"));
    return existing;
  }

  /** How many of a user's keys still work (the password-reset page says so before the reset). */
  async countActive(userId: string): Promise<number> {
    return this.repo.countActive(userId);
  }

  /**
   * Revokes every working key of a user at once (a password reset that asks for it: a new password alone leaves
   * them working). Returns how many were revoked; this process forgets them now, the others by the trigger.
   */
  async revokeAllOf(userId: string): Promise<number> {
    const hashes = await this.repo.revokeAllOf(userId);
    for (const keyHash of hashes) this.cache.invalidate(keyHash);
    return hashes.length;
  }

  /**
   * Revokes the working keys `userId` made in one workspace (a member removed from it: issue 50). `db` is the
   * caller's transaction, so the removal and the revocation commit together; api_keys' trigger announces each key on
   * the revocation channel at commit, which every replica (this one too) hears. This process forgets them now as well.
   */
  async revokeMadeBy(workspaceId: string, userId: string, db?: Db): Promise<number> {
    const hashes = await (db ? new ApiKeyRepository(db) : this.repo).revokeMadeBy(workspaceId, userId);
    for (const keyHash of hashes) this.cache.invalidate(keyHash);
    return hashes.length;
  }

  /** Drops a user's keys from this process's cache now (the others hear it from the users table's trigger). */
  async forgetCachedKeysOf(userId: string): Promise<void> {
    for (const keyHash of await this.repo.hashesOf(userId)) this.cache.invalidate(keyHash);
  }

  /** Records use without slowing the request: at most once a minute per key, not awaited. */
  touch(keyId: string, now = Date.now()): void {
    const last = this.lastTouched.get(keyId) ?? 0;
    if (now - last < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(keyId, now);
    const p = this.repo
      .setLastUsed(keyId, new Date(now))
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
