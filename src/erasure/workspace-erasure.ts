import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import { AdminRepository } from "../auth/admin.repository.js";
import { ApiKeyRepository } from "../auth/api-key.repository.js";
import type { Database } from "../db/client.js";
import { ApiError, msg } from "../errors.js";
import type { ExperimentService } from "../experiments/service.js";
import type { Logger } from "../logger.js";
import { deleteUnder, type Bucket } from "../storage/bucket.js";
import { memberOrNotFound } from "../workspaces/members.service.js";
import { assertAllowed } from "../workspaces/permissions.js";
import { WorkspaceRepository } from "../workspaces/workspace.repository.js";

/** The bucket folders of a shared workspace: its storage prefix is its own id (storage-prefix.ts). */
export const workspaceObjectFolders = (workspaceId: string) => [`${workspaceId}/`, `models/${workspaceId}/`, `logs/${workspaceId}/`];

/**
 * Deleting a shared workspace (DELETE /v1/workspaces/{id}, owners: workspace.delete), crash-safe with the same steps
 * as an account's erasure (account-erasure.ts):
 *  1. the workspace is marked (workspaces.erasing_at), its members removed and every key of it deleted, in that order:
 *     from here on no request reaches it, and start-up (or the sweep) resumes a deletion a kill cut short;
 *  2. every experiment is deleted (ExperimentDeletion: unpublished first, jobs stopped, files removed);
 *  3. the bucket folders under its prefix: uploads, batches, models, logs;
 *  4. the workspace row, and by cascade every row left in it (files, batches, chat conversations);
 *  5. every replica sweeps its model cache (the account erasure's announcement), and the database is compacted.
 * A personal workspace is not deleted this way: it goes with its owner's account (DELETE /v1/me).
 */
export class WorkspaceErasure {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      experiments: ExperimentService;
      bucket: Bucket;
      logger: Logger;
      audit: AuditLog;
      database: Pick<Database, "db" | "markCompactionDue" | "compact">;
      /** Tells every replica to sweep its model cache against the models table (builder_account_erased). */
      announce: (id: string) => Promise<void>;
    },
  ) {}

  /** Step 1 and every experiment unpublished now; the rest in the background. Returns how many experiments go. */
  async begin(actor: AuditActor, workspaceId: string): Promise<{ experiments: number }> {
    const { db } = this.deps.database;
    assertAllowed(await memberOrNotFound(db, workspaceId, actor.userId), "workspace.delete");
    const workspaces = new WorkspaceRepository(db);
    if ((await workspaces.personalOwnerOf(workspaceId)) !== null) {
      throw new ApiError(409, "personal_workspace", msg("workspace.delete_personal"));
    }
    if (!(await workspaces.markErasing(workspaceId))) return { experiments: 0 };
    await new AdminRepository(db).deleteWorkspaceInvitations(workspaceId);
    await new ApiKeyRepository(db).deleteAllIn(workspaceId);
    const rows = await this.deps.experiments.repo.markAllDeletingIn(workspaceId);
    await this.deps.audit.record({ ...actor, workspaceId }, "workspace_deletion_requested", `workspace ${workspaceId}`, {
      experiments: rows.length,
    });
    for (const row of rows) await this.deps.experiments.beginDeletion(row.id);
    void this.finish(workspaceId);
    return { experiments: rows.length };
  }

  /** Runs (or joins) the deletion to its end; a failure is logged and left to the sweep. */
  finish(workspaceId: string): Promise<void> {
    let running = this.inFlight.get(workspaceId);
    if (!running) {
      running = this.run(workspaceId)
        .catch((err) =>
          this.deps.logger.error({ err, workspace: workspaceId }, "workspace deletion failed; it is retried by the next sweep"),
        )
        .finally(() => this.inFlight.delete(workspaceId));
      this.inFlight.set(workspaceId, running);
    }
    return running;
  }

  /** The unfinished deletions (called by the account erasure's sweep, at start and every few seconds). */
  async sweep(): Promise<void> {
    for (const { id } of await new WorkspaceRepository(this.deps.database.db).erasing()) await this.finish(id);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.inFlight.values()]);
  }

  private async run(workspaceId: string): Promise<void> {
    const { experiments, bucket, logger, database } = this.deps;
    const workspaces = new WorkspaceRepository(database.db);
    if (!(await workspaces.erasing()).some((w) => w.id === workspaceId)) return;
    // Again: a kill may have come before these steps of begin().
    await new AdminRepository(database.db).deleteWorkspaceInvitations(workspaceId);
    await new ApiKeyRepository(database.db).deleteAllIn(workspaceId);
    const rows = await experiments.repo.markAllDeletingIn(workspaceId);
    for (const row of rows) await experiments.beginDeletion(row.id);
    await experiments.deletion.finishAll(rows);
    let objects = 0;
    for (const folder of workspaceObjectFolders(workspaceId)) objects += await deleteUnder(bucket, folder);
    await database.markCompactionDue();
    await workspaces.deleteErased(workspaceId);
    await this.deps
      .announce(workspaceId)
      .catch((err) => logger.warn({ err, workspace: workspaceId }, "could not announce the deletion; replicas sweep at their next start"));
    logger.info({ workspace: workspaceId, experiments: rows.length, objects }, "workspace deleted");
    try {
      await database.compact();
    } catch (err) {
      logger.error(
        { err, workspace: workspaceId },
        "compacting the database after a workspace deletion failed; tried again at the next start",
      );
    }
  }
}
