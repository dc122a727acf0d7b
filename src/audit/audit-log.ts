import type { Db } from "../db/client.js";
import { AuditRepository, type AuditRow } from "./audit.repository.js";
import { spreadsheetCell } from "../datasets/table-writer.js";
import type { Logger } from "../logger.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/** What is recorded. Names are part of the API (GET /v1/audit): add new ones, never rename. */
export const AUDIT_ACTIONS = [
  "sign_in",
  "api_key_created",
  "api_key_revoked",
  "file_uploaded",
  "file_deleted",
  "folder_deleted",
  "experiment_created",
  "experiment_deleted",
  "model_downloaded",
  "batch_scored",
  "first_account_created",
  "account_erasure_requested",
  "account_erased",
  "invitation_created",
  "invitation_used",
  "invitation_revoked",
  "user_disabled",
  "user_enabled",
  "password_reset_issued",
  "password_reset_used",
  "password_changed",
  "role_changed",
  "operating_point_saved",
  "model_version_restored",
  "input_check_mode_changed",
  "worker_drain_requested",
  "worker_resumed",
  "pacs_configured",
  "pacs_removed",
  "pacs_send_back_set",
  "pacs_auto_score_set",
  "pacs_sent",
  "pacs_send_failed",
  "outcomes_posted",
  "monitoring_alert_opened",
  "monitoring_alert_updated",
  "monitoring_alert_rules_changed",
  "model_version_approved",
  "workspace_settings_changed",
  "workspace_created",
  "workspace_renamed",
  "workspace_deletion_requested",
  "member_added",
  "member_invited",
  "member_role_changed",
  "member_removed",
  "member_left",
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * The actor of what Builder does by itself on a row whose builder's account was erased (a monitoring alert on a
 * shared workspace's model): the log's actor_id is NOT NULL, and no person did it.
 */
export const SYSTEM_ACTOR_ID = "00000000-0000-0000-0000-000000000000";

export interface AuditActor {
  userId: string;
  /** system: the server itself (an erasure finished in the background). */
  via: "api_key" | "session" | "cli" | "system";
  keyId?: string;
  /** The workspace acted in; none (the CLI, the server itself): the actor's personal workspace (migration 0018's trigger). */
  workspaceId?: string;
}

/** The actor of a request, in the request's workspace. */
export const actorOf = (auth: { userId: string; via: "api_key" | "session"; keyId?: string; workspace?: { id: string } }): AuditActor => ({
  userId: auth.userId,
  via: auth.via,
  keyId: auth.keyId,
  workspaceId: auth.workspace?.id,
});

export type { AuditRow } from "./audit.repository.js";

/**
 * The append-only audit log. Entries hold ids, numbers, key prefixes, sizes and hashes only (no file, column or
 * experiment names: they may hold patients' names), so they are kept when the data they mention is erased.
 * A failed write is logged, not thrown: the action it records has already happened and must still be answered.
 */
export class AuditLog {
  private readonly repo: AuditRepository;

  constructor(private readonly deps: { db: Db; logger: Logger }) {
    this.repo = new AuditRepository(deps.db);
  }

  async record(actor: AuditActor, action: AuditAction, target?: string, details: Record<string, unknown> = {}): Promise<void> {
    try {
      await this.repo.insert({
        actorId: actor.userId,
        workspaceId: actor.workspaceId ?? null,
        via: actor.via,
        action,
        target: target ?? null,
        details: { ...details, ...(actor.keyId ? { key_id: actor.keyId } : {}) },
      });
    } catch (err) {
      this.deps.logger.error({ err, action, user: actor.userId }, "could not write the audit log entry");
    }
  }

  /** The workspace's activity, newest first: every member's entries in it (a personal workspace: its owner's). */
  async list(scope: Scope, page: { limit: number; offset: number }) {
    assertAllowed(scope.workspace, "experiment.read");
    const rows = await this.repo.page(scope.workspace.id, page);
    const total = await this.repo.count(scope.workspace.id);
    return { data: rows.map(auditView), total, limit: page.limit, offset: page.offset, has_more: page.offset + rows.length < total };
  }

  /** Every entry of the user, oldest first, as CSV (RFC 4180 quoting; a cell starting with = + - @ is prefixed with ' against spreadsheet formulas). */
  async csv(scope: Scope): Promise<string> {
    assertAllowed(scope.workspace, "experiment.read");
    const rows = await this.repo.all(scope.workspace.id);
    const lines = [["seq", "at", "action", "via", "target", "details"].join(",")];
    for (const r of rows.map(auditView))
      lines.push([r.seq, r.at, r.action, r.via, r.target ?? "", JSON.stringify(r.details)].map(csvCell).join(","));
    return `${lines.join("\r\n")}\r\n`;
  }
}

export function auditView(r: AuditRow) {
  return {
    seq: r.seq,
    at: r.at.toISOString(),
    action: r.action,
    via: r.via,
    target: r.target,
    details: r.details as Record<string, unknown>,
  };
}

function csvCell(value: unknown): string {
  return typeof value === "number" ? String(value) : spreadsheetCell(String(value));
}
