// The workspaces a user belongs to (issue 50 item 1): the switcher's list, a new shared workspace (its creator is
// its first owner), renaming one. Members are the members service's.
import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { Db } from "../db/client.js";
import { detail, errors, msg } from "../errors.js";
import { memberOrNotFound } from "./members.service.js";
import { assertAllowed } from "./permissions.js";
import { WorkspaceRepository, type MyWorkspace } from "./workspace.repository.js";

export type { MyWorkspace } from "./workspace.repository.js";

export const WORKSPACE_NAME_MAX = 100;

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > WORKSPACE_NAME_MAX) {
    throw errors.invalidRequest(msg("workspace.bad_name", { max: WORKSPACE_NAME_MAX }), [
      detail("name", msg("workspace.bad_name", { max: WORKSPACE_NAME_MAX })),
    ]);
  }
  return trimmed;
}

export class WorkspaceService {
  constructor(private readonly deps: { db: Db; audit: Pick<AuditLog, "record"> }) {}

  listMine(userId: string): Promise<MyWorkspace[]> {
    return new WorkspaceRepository(this.deps.db).listForUser(userId);
  }

  /** A new shared workspace; its creator is its owner. Any signed-in user may make one, as they may build. */
  async create(actor: AuditActor, name: string): Promise<MyWorkspace> {
    const checked = checkedName(name);
    const row = await this.deps.db.transaction(async (tx) => new WorkspaceRepository(tx as unknown as Db).create(checked, actor.userId));
    await this.deps.audit.record({ ...actor, workspaceId: row.id }, "workspace_created", `workspace ${row.id}`);
    return { ...row, personal: false, role: "owner", members: 1 };
  }

  async rename(actor: AuditActor, workspaceId: string, name: string): Promise<MyWorkspace> {
    const checked = checkedName(name);
    assertAllowed(await memberOrNotFound(this.deps.db, workspaceId, actor.userId), "workspace.rename");
    const repo = new WorkspaceRepository(this.deps.db);
    await repo.rename(workspaceId, checked);
    // The name may hold a patient's or a study's name: the audit entry keeps ids only, as every entry does.
    await this.deps.audit.record({ ...actor, workspaceId }, "workspace_renamed", `workspace ${workspaceId}`);
    return (await repo.listForUser(actor.userId)).find((w) => w.id === workspaceId)!;
  }
}
