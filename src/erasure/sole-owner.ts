// Erasing the only owner of a shared workspace that others still use would leave them with no one who can manage
// members or keys, approve models or delete the workspace. Builder refuses such an erasure (docs/teams.md, Erasure):
// handing a clinical team's workspace to someone nobody chose is a decision for people, not for the erasure.
import type { Db } from "../db/client.js";
import { ApiError, msg } from "../errors.js";
import { WorkspaceRepository } from "../workspaces/workspace.repository.js";

/**
 * Throws 409 `sole_owner_of_shared_workspace`, naming the workspaces, when `userId` is the only owner of a shared
 * workspace with other members; nothing is changed. Called before an erasure marks anything (DELETE /v1/me and
 * `./builder users erase`), never when one is resumed: what began is finished.
 */
export async function refuseIfSoleOwnerOfSharedWorkspaces(db: Db, userId: string): Promise<void> {
  const held = await new WorkspaceRepository(db).soleOwnedWithOthers(userId);
  if (held.length === 0) return;
  // The names are shown only to the account itself or to the operator erasing it, both of whom may see them.
  const names = held.map((w) => `“${w.name}”`).join(", ");
  throw new ApiError(409, "sole_owner_of_shared_workspace", msg("workspace.sole_owner_erasure", { workspaces: names }), {
    workspaces: held.map((w) => ({ id: w.id, name: w.name })),
  });
}
