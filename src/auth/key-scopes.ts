import { ApiError, msg } from "../errors.js";

/**
 * What an API key may do (issue 50 item 3). A key pasted into a hospital program should be able to predict and
 * nothing else; a notebook that builds needs more. Each route declares the one scope it needs (RouteSpec.scope in
 * src/http/route.ts); route.ts checks it right after authentication, for every way in (Express and the /predict lane).
 *
 * - predict: POST /predict and /v1/experiments/{id}/predict (optionally only the key's listed models);
 * - read: the GETs of /v1 (experiments, reports, models, batches, audit...);
 * - build: uploads, experiments, Retrospective studies, batches, operating points, model settings, deletions;
 * - admin: what manages the workspace or the server (users, invitations, workers, PACS settings, erasure).
 *
 * read < build < admin: a key that may build may also read what it built (it must poll its experiment), and an admin
 * key may do both. predict stands apart: a key that may change things does not score patients unless it says so, and
 * a predict key reads nothing.
 *
 * A key made before scopes has scopes NULL and keeps full access (no running program breaks at the upgrade); a
 * session (the dashboard) is not limited by scopes at all: its limits are the user's role.
 */
export const KEY_SCOPES = ["predict", "read", "build", "admin"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** A new key's scopes when its maker names none: the least a program needs to use a model. */
export const DEFAULT_KEY_SCOPES: readonly KeyScope[] = ["predict"];
/** Every scope: what a test, a bench or an operator's own script asks for when it means "anything". */
export const ALL_KEY_SCOPES: readonly KeyScope[] = KEY_SCOPES;

/** The scopes that open a route needing `needed` (itself, and the ones above it). */
const OPENED_BY: Record<KeyScope, readonly KeyScope[]> = {
  predict: ["predict"],
  read: ["read", "build", "admin"],
  build: ["build", "admin"],
  admin: ["admin"],
};

/** What the checks read of the caller (AuthInfo has it; spelt out here so that types.ts can import KeyScope). */
interface Caller {
  via: "api_key" | "session";
  keyScopes?: readonly KeyScope[] | null;
  keyModelIds?: readonly string[] | null;
}

export function isKeyScope(x: string): x is KeyScope {
  return (KEY_SCOPES as readonly string[]).includes(x);
}

/** Whether a key with `held` scopes (null: a key made before scopes, full access) may use a route needing `needed`. */
export function keyScopeAllows(held: readonly KeyScope[] | null | undefined, needed: KeyScope): boolean {
  if (held === null || held === undefined) return true;
  return OPENED_BY[needed].some((s) => held.includes(s));
}

/** Scopes as stored: each once, in KEY_SCOPES order (so the list and the dashboard read the same way). */
export function normaliseScopes(scopes: readonly KeyScope[]): KeyScope[] {
  return KEY_SCOPES.filter((s) => scopes.includes(s));
}

/** Refuses an API key without the route's scope (403 api_key_scope_missing, naming it); sessions pass. */
export function assertKeyScope(auth: Caller, needed: KeyScope): void {
  if (auth.via !== "api_key" || keyScopeAllows(auth.keyScopes, needed)) return;
  throw new ApiError(403, "api_key_scope_missing", msg("auth.api_key_scope_missing", { scope: needed }));
}

/** Refuses a key limited to some models when it calls another (403 api_key_model_not_allowed); others pass. */
export function assertKeyModel(auth: Caller, experimentId: number): void {
  const allowed = auth.via === "api_key" ? auth.keyModelIds : null;
  if (!allowed || allowed.includes(String(experimentId))) return;
  throw new ApiError(403, "api_key_model_not_allowed", msg("auth.api_key_model_not_allowed", { experiment_id: experimentId }));
}
