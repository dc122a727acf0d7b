import type { WorkspaceRole } from "../workspaces/permissions.js";
import type { KeyScope } from "./key-scopes.js";

/**
 * What authentication reads of a request and writes to its response: Express's req/res have these, and so do the
 * plain node:http adapters of the /predict lane (src/http/predict-lane.ts).
 */
export interface AuthRequest {
  method: string;
  get(name: string): string | undefined;
}
export interface AuthResponse {
  set(headers: Record<string, string>): unknown;
}

/**
 * The workspace a request acts in (issue 50): a session's X-Builder-Workspace header or the user's personal one, an
 * API key's own. `role` is the caller's in it (services check it with assertAllowed); `storagePrefix` is where its
 * objects live in the bucket (src/workspaces/storage-prefix.ts).
 */
export interface RequestWorkspace {
  id: string;
  role: WorkspaceRole;
  personal: boolean;
  storagePrefix: string;
}

/** Who made the request. Routes see only this, whatever the credential was. */
export interface AuthInfo {
  /** The workspace the request reads and writes in. */
  workspace: RequestWorkspace;
  userId: string;
  email: string;
  /** admin may use /v1/admin (users, invitations, password resets). */
  role: "admin" | "member";
  via: "api_key" | "session";
  keyId?: string;
  sessionId?: string;
  /** An API key's scopes (src/auth/key-scopes.ts); null or absent: a key made before scopes, or a session (full access). */
  keyScopes?: readonly KeyScope[] | null;
  /** The experiment ids (as strings) a key may predict with; null or absent: any model of its workspace. */
  keyModelIds?: readonly string[] | null;
}

/**
 * none: public. api_key: Authorization: Bearer <key> (rate limited).
 * session: dashboard cookie + CSRF header on unsafe methods. any: either of the two.
 */
export type AuthMode = "none" | "api_key" | "session" | "any";

/** Resolves the caller for a route's auth mode, or throws the ApiError (401/403/429) that refuses it; null for "none". */
export type Authenticate = (req: AuthRequest, res: AuthResponse, mode: AuthMode) => Promise<AuthInfo | null>;
