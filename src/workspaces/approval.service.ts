// A second pair of eyes before a model is used (issue 50 item 4, docs/teams.md): an owner turns it on for a
// workspace; a reviewer or owner who did not build a version approves it, with the intended use they approve it for.
// Serving then answers every key of the workspace with it (approval-rule.ts; the gate is in src/serving).
import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { Db } from "../db/client.js";
import { ApiError, errors, msg } from "../errors.js";
import { ModelRepository, type ModelRow } from "../serving/model-repository.js";
import { approvalRefusal, approvalView } from "./approval-rule.js";

export { approvalView, type ApprovalView } from "./approval-rule.js";
import { assertAllowed, isAllowed, type WorkspaceMember } from "./permissions.js";
import { WorkspaceRepository } from "./workspace.repository.js";

/** Who asks, and in which workspace (the request's: AuthInfo.workspace, resolved when it was authenticated). */
export interface ApprovalCaller {
  actor: AuditActor;
  workspaceId: string;
}

export class ApprovalService {
  constructor(
    private readonly deps: {
      db: Db;
      audit: AuditLog;
      /** Serving's cache: this replica answers with the new state at once (others within its 2 s lookup). */
      cache: { approved(row: ModelRow): void; approvalSettingChanged(workspaceId: string): void };
    },
  ) {}

  private async member(caller: ApprovalCaller): Promise<WorkspaceMember> {
    const member = await new WorkspaceRepository(this.deps.db).membership(caller.workspaceId, caller.actor.userId);
    if (!member) throw errors.notFound(msg("workspace.not_found"));
    return member;
  }

  /** The experiment's current version in the caller's workspace, or 404 / 409 (none published). */
  private async current(caller: ApprovalCaller, experimentId: number): Promise<ModelRow> {
    const row = await new ModelRepository(this.deps.db).current(caller.workspaceId, experimentId);
    if (!row) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    return row;
  }

  /** GET: the current version's approval, and whether the caller may approve it (the dashboard shows the form). */
  async state(caller: ApprovalCaller, experimentId: number) {
    const member = await this.member(caller);
    assertAllowed(member, "experiment.read");
    const row = await this.current(caller, experimentId);
    const required = await new WorkspaceRepository(this.deps.db).requireApproval(caller.workspaceId);
    const emails = await new ModelRepository(this.deps.db).emailsOf(row.approvedBy ? [row.approvedBy] : []);
    return {
      experiment_id: experimentId,
      ...approvalView(row, required, emails),
      built_by_you: row.userId === member.userId,
      can_approve: isAllowed(member.role, "model.approve") && row.userId !== member.userId && row.approvedAt === null,
    };
  }

  /** POST: approves the current version for the intended use given. */
  async approve(caller: ApprovalCaller, experimentId: number, intendedUse: string) {
    const member = await this.member(caller);
    const row = await this.current(caller, experimentId);
    const refusal = approvalRefusal(member, { builderId: row.userId, approvedAt: row.approvedAt });
    const words = { id: experimentId, version: row.version };
    if (refusal === "own_version") throw new ApiError(403, "model_version_own_approval", msg("workspace.approve_own_version", words));
    if (refusal === "already_approved") throw new ApiError(409, "model_version_already_approved", msg("workspace.already_approved", words));
    const text = intendedUse.trim();
    if (!text) throw errors.invalidRequest(msg("workspace.intended_use_required"));
    const models = new ModelRepository(this.deps.db);
    const approved = await models.approve(row.id, member.userId, text);
    if (!approved) throw new ApiError(409, "model_version_already_approved", msg("workspace.already_approved", words));
    this.deps.cache.approved(approved);
    // The intended use is the team's free text: kept on the version, not in the log (which holds no free text).
    await this.deps.audit.record(caller.actor, "model_version_approved", `experiment ${experimentId}`, {
      version: approved.version,
      workspace_id: caller.workspaceId,
    });
    const required = await new WorkspaceRepository(this.deps.db).requireApproval(caller.workspaceId);
    return { experiment_id: experimentId, ...approvalView(approved, required, await models.emailsOf([member.userId])) };
  }

  /** PATCH /v1/workspaces/{id}/settings: an owner turns the second pair of eyes on or off. */
  async setRequireApproval(actor: AuditActor, workspaceId: string, on: boolean) {
    const member = await this.member({ actor, workspaceId });
    assertAllowed(member, "workspace.settings");
    await new WorkspaceRepository(this.deps.db).setRequireApproval(workspaceId, on);
    this.deps.cache.approvalSettingChanged(workspaceId);
    await this.deps.audit.record(actor, "workspace_settings_changed", `workspace ${workspaceId}`, { require_approval: on });
    return { id: workspaceId, require_approval: on };
  }
}
