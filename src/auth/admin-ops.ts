import type { ApiKeyInfo, ApiKeyListed, ApiKeyService } from "./api-key.service.js";
import type { KeyScope } from "./key-scopes.js";
import type { AdminRepository } from "./admin.repository.js";
import type { AuditLog } from "../audit/audit-log.js";
import { ApiError, msg } from "../errors.js";
import type { Role, User, UserService } from "./user.service.js";

/** What the `users` and `keys` CLI commands do, whether on the database directly or through a running server. */
export interface AdminOps {
  /** True when a running server does them (PGlite, through its admin socket). */
  remote?: boolean;
  /** An administrator when `admin`, and also when no administrator exists yet (the operator's first account). */
  createUser(input: { email: string; password: string; admin?: boolean }): Promise<User>;
  /** Makes a user an administrator or a member; the last active administrator cannot be made a member. */
  setRole(input: { email: string; role: Role }): Promise<User>;
  /** scopes default to predict (ApiKeyService); expiresAt is ISO 8601 (it crosses the admin socket as JSON). */
  createKey(input: {
    email: string;
    name?: string;
    rateLimitPerMinute?: number;
    scopes?: KeyScope[];
    modelIds?: number[];
    expiresAt?: string;
  }): Promise<{ key: string; info: ApiKeyInfo }>;
  listKeys(input: { email: string }): Promise<ApiKeyListed[]>;
  revokeKey(input: { idOrKey: string }): Promise<ApiKeyInfo>;
  /**
   * Marks the account for erasure (signed out, keys deleted); the server finishes it (its erasure sweep), or the
   * CLI does when it opened the database itself. Returns the user's id.
   */
  markForErasure(input: { email: string }): Promise<{ id: string }>;
}

export function directOps(users: UserService, apiKeys: ApiKeyService, admins: AdminRepository, audit: AuditLog): AdminOps {
  return {
    createUser: async ({ email, password, admin }) => {
      const noAdminYet = !(await admins.listUsers()).some((u) => u.role === "admin" && !u.erasingAt);
      return users.create({ email, password, role: admin || noAdminYet ? "admin" : "member" });
    },
    setRole: async ({ email, role }) => {
      const user = await users.requireByEmail(email);
      const changed = await admins.changeAccess(user.id, { role });
      if (changed === "last_admin") throw new ApiError(409, "last_admin", msg("auth.last_admin_cli", { email: user.email }));
      await apiKeys.forgetCachedKeysOf(user.id);
      // The terminal has no signed-in actor: the entry goes under the account whose role changed, as `users erase` does.
      if (user.role !== role)
        await audit.record({ userId: user.id, via: "cli" }, "role_changed", `user ${user.id}`, { from: user.role, to: role });
      return { ...user, role };
    },
    createKey: async ({ email, name, rateLimitPerMinute, scopes, modelIds, expiresAt }) =>
      apiKeys.create((await users.requireByEmail(email)).id, {
        name,
        rateLimitPerMinute,
        scopes,
        modelIds,
        expiresAt: expiresAt ? new Date(expiresAt) : null,
      }),
    listKeys: async ({ email }) => apiKeys.list((await users.requireByEmail(email)).id),
    revokeKey: ({ idOrKey }) => apiKeys.revoke(idOrKey),
    markForErasure: async ({ email }) => {
      const { id } = await users.requireByEmail(email);
      await users.assertErasable(id);
      await users.beginErasure(id);
      return { id };
    },
  };
}
