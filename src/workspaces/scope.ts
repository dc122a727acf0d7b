// Who acts, and in which workspace: what every workspace-scoped service takes instead of a bare user id. An
// AuthInfo is one; the CLI and tests make one with personalScope(). Reads filter by workspace.id, inserts write
// workspace.id and user_id = userId ("built by"), writes first ask assertAllowed(workspace, permission).
import type { RequestWorkspace } from "../auth/types.js";
import type { Db } from "../db/client.js";
import { ApiError, msg } from "../errors.js";
import { WorkspaceRepository } from "./workspace.repository.js";

export type { RequestWorkspace } from "../auth/types.js";

export interface Scope {
  userId: string;
  workspace: RequestWorkspace;
}

/** The user's own personal workspace as a Scope (the CLI, jobs acting for a user, tests). */
export async function personalScope(db: Db, userId: string): Promise<Scope> {
  const workspace = await new WorkspaceRepository(db).resolve(userId);
  if (!workspace) throw workspaceNotFound();
  return { userId, workspace };
}

/** A workspace the caller does not belong to answers as a missing one: whether it exists is not revealed. */
export function workspaceNotFound(): ApiError {
  return new ApiError(404, "workspace_not_found", msg("workspace.not_found"));
}
