import type { ApiKeyInfo, ApiKeyService } from "./api-key.service.js";
import type { User, UserService } from "./user.service.js";

/** What the `users` and `keys` CLI commands do, whether on the database directly or through a running server. */
export interface AdminOps {
  /** True when a running server does them (PGlite, through its admin socket). */
  remote?: boolean;
  createUser(input: { email: string; password: string }): Promise<User>;
  createKey(input: { email: string; name?: string; rateLimitPerMinute?: number }): Promise<{ key: string; info: ApiKeyInfo }>;
  listKeys(input: { email: string }): Promise<ApiKeyInfo[]>;
  revokeKey(input: { idOrKey: string }): Promise<ApiKeyInfo>;
  /**
   * Marks the account for erasure (signed out, keys deleted); the server finishes it (its erasure sweep), or the
   * CLI does when it opened the database itself. Returns the user's id.
   */
  markForErasure(input: { email: string }): Promise<{ id: string }>;
}

export function directOps(users: UserService, apiKeys: ApiKeyService): AdminOps {
  return {
    createUser: (input) => users.create(input),
    createKey: async ({ email, name, rateLimitPerMinute }) =>
      apiKeys.create((await users.requireByEmail(email)).id, { name, rateLimitPerMinute }),
    listKeys: async ({ email }) => apiKeys.list((await users.requireByEmail(email)).id),
    revokeKey: ({ idOrKey }) => apiKeys.revoke(idOrKey),
    markForErasure: async ({ email }) => {
      const { id } = await users.requireByEmail(email);
      await users.beginErasure(id);
      return { id };
    },
  };
}
