// A second pair of eyes (issue 50 item 4, docs/teams.md): the rule alone, free of the database, so that serving's
// hot path and the approval service ask the same two questions and a unit test walks every case.
import type { ModelRow } from "../serving/model-repository.js";
import { assertAllowed, type WorkspaceMember } from "./permissions.js";

/** What serving remembers of a version to decide whom it answers: cheap to read on every /predict. */
export interface ApprovalState {
  /** The version's workspace asks for approval (workspaces.require_approval). */
  required: boolean;
  /**
   * Who built the version (models.user_id): their keys are answered before approval, so they can try it. Null once
   * the builder's account is erased (a former member): nobody is the builder then, so only approval opens it.
   */
  builderId: string | null;
  /** When it was approved, or null. */
  approvedAt: Date | null;
}

/**
 * Whether a version answers a key made by `callerId`. Off: everyone (the seed's behaviour). On: the builder always
 * (they must be able to test what they ask others to approve), anyone else only once approved.
 */
export function answersCaller(state: ApprovalState, callerId: string): boolean {
  return !state.required || state.approvedAt !== null || state.builderId === callerId;
}

/** Why `approver` may not approve a version built by `builderId`, or null when they may. */
export type ApprovalRefusal = "own_version" | "already_approved";

/**
 * A reviewer or owner (model.approve) who did not build the version; the permission is checked first, so a viewer
 * hears that their role lacks it (missing_permission_model_approve) before anything about who built it.
 */
export function approvalRefusal(
  approver: Pick<WorkspaceMember, "role" | "userId">,
  version: { builderId: string | null; approvedAt: Date | null },
): ApprovalRefusal | null {
  assertAllowed(approver, "model.approve");
  if (version.builderId === approver.userId) return "own_version";
  if (version.approvedAt !== null) return "already_approved";
  return null;
}

/** A version's approval as every view shows it (the versions list, the result page, the model card). */
export interface ApprovalView {
  version: number;
  required: boolean;
  approved: boolean;
  /** The approver's e-mail; null when not approved, or when the approver's account was erased (former_member). */
  approved_by: string | null;
  former_member: boolean;
  approved_at: Date | null;
  intended_use: string | null;
}

export function approvalView(
  row: Pick<ModelRow, "version" | "approvedBy" | "approvedAt" | "approvedIntendedUse">,
  required: boolean,
  emails: ReadonlyMap<string, string>,
): ApprovalView {
  const approved = row.approvedAt !== null;
  const email = row.approvedBy ? (emails.get(row.approvedBy) ?? null) : null;
  return {
    version: row.version,
    required,
    approved,
    approved_by: email,
    former_member: approved && email === null,
    approved_at: row.approvedAt,
    intended_use: row.approvedIntendedUse,
  };
}
