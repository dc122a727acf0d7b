import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { UserService } from "../auth/user.service.js";
import type { ExperimentService } from "../experiments/service.js";
import type { Database } from "../db/client.js";
import type { Logger } from "../logger.js";
import { deleteUnder, type Bucket } from "../storage/bucket.js";

/**
 * The bucket folders of the user's personal workspace (its storage prefix is the user id: uploads, batches, every
 * model version and report, job logs). A shared workspace's objects live under its own id and stay.
 */
export const userObjectFolders = (userId: string) => [`${userId}/`, `models/${userId}/`, `logs/${userId}/`];

/**
 * Erasing an account (DELETE /v1/me, `./builder users erase`), crash-safe like an experiment's deletion:
 *  1. the user is marked (users.erasing_at), signed out everywhere and their API keys deleted: from here on
 *     nothing can act as them, and start-up (or the sweep) resumes an erasure a kill cut short;
 *  2. every experiment of their PERSONAL workspace is deleted (ExperimentDeletion: unpublished first, jobs stopped,
 *     files removed); what they built in a shared workspace belongs to it and stays (issue 50 item 6, docs/teams.md);
 *  3. the bucket folders of the personal workspace: uploads, batches, models, logs;
 *  4. the users row: by cascade the personal workspace and every row left in it, their chat conversations and their
 *     keys everywhere; in shared workspaces the experiments, models, batches and files they built stay, their
 *     user_id set null (a former member, no e-mail left to show);
 *  5. every replica is told (builder_account_erased) and sweeps its model cache against the models table; a replica
 *     that was down, or killed mid-way, sweeps at its next start (createServing);
 *  6. the database is compacted (db/compaction.ts), so the deleted rows' bytes do not stay in its files (marked due
 *     before step 4, so that a kill before it is caught up at the next start).
 * Each step is idempotent; every path and query is keyed by this user's id or personal workspace, so no one else's
 * data is touched.
 */
export class AccountErasure {
  private readonly inFlight = new Map<string, Promise<void>>();
  private sweepTimer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly deps: {
      users: UserService;
      experiments: ExperimentService;
      bucket: Bucket;
      logger: Logger;
      audit: AuditLog;
      /** Called after each erasure: the last administrator gone, the server prints a new setup code (FirstRunSetup). */
      afterErasure?: () => Promise<unknown>;
      /** Tells every replica the account is gone (builder_account_erased): each sweeps its own model cache. */
      announceErased: (userId: string) => Promise<void>;
      /** The database's compaction after an erasure (db/compaction.ts): marked due before the rows go, run after. */
      database: Pick<Database, "markCompactionDue" | "compact">;
      /** Other crash-safe erasures resumed by the same sweep (a shared workspace's deletion: workspace-erasure.ts). */
      alsoSweep?: () => Promise<void>;
    },
  ) {}

  /**
   * Step 1 now, and every experiment unpublished; the rest in the background. Returns how many experiments go.
   * Refused, with nothing changed, while the user is the only owner of a shared workspace with other members.
   */
  async begin(actor: AuditActor): Promise<{ experiments: number }> {
    const { userId } = actor;
    // A shared workspace must not be left ownerless: the person hands it over (or deletes it) first.
    await this.deps.users.assertErasable(userId);
    if (!(await this.deps.users.beginErasure(userId))) return { experiments: 0 };
    const rows = await this.deps.experiments.repo.markAllDeleting(userId);
    await this.deps.audit.record(actor, "account_erasure_requested", undefined, { experiments: rows.length });
    for (const row of rows) await this.deps.experiments.beginDeletion(row.id);
    void this.finish(userId);
    return { experiments: rows.length };
  }

  /** Runs (or joins) the erasure to its end; a failure is logged and left to the sweep. */
  finish(userId: string): Promise<void> {
    let running = this.inFlight.get(userId);
    if (!running) {
      running = this.run(userId)
        .catch((err) => this.deps.logger.error({ err, user: userId }, "account erasure failed; it is retried by the next sweep"))
        .finally(() => this.inFlight.delete(userId));
      this.inFlight.set(userId, running);
    }
    return running;
  }

  private async run(userId: string): Promise<void> {
    const { users, experiments, bucket, logger } = this.deps;
    if (!(await users.erasing()).some((u) => u.id === userId)) return;
    await users.beginErasure(userId); // again: a key or session made in between (a restart mid-way) goes too
    const rows = await experiments.repo.markAllDeleting(userId);
    for (const row of rows) await experiments.beginDeletion(row.id);
    await experiments.deletion.finishAll(rows);
    let objects = 0;
    for (const folder of userObjectFolders(userId)) objects += await deleteUnder(bucket, folder);
    // Due before the rows go: a kill between here and the compaction is caught up at the next start.
    await this.deps.database.markCompactionDue();
    await users.deleteErased(userId);
    // Each replica keeps its own copies of models (model-cache/); one that missed a version's removal (its listener
    // was down) drops them now, and one that was down drops them at its next start.
    await this.deps
      .announceErased(userId)
      .catch((err) =>
        logger.warn({ err, user: userId }, "could not announce the erasure; every replica sweeps its model cache at its next start"),
      );
    await this.deps.audit.record({ userId, via: "system" }, "account_erased", undefined, { experiments: rows.length, objects });
    logger.info({ user: userId, experiments: rows.length, objects }, "account erased");
    await this.deps.afterErasure?.();
    // The deleted rows' bytes stay in the database's files until compacted: "erased" must mean unreadable on disk.
    try {
      const done = await this.deps.database.compact();
      logger.info({ user: userId, database: done.kind, tables: done.tables.length }, "database compacted after the erasure");
    } catch (err) {
      logger.error({ err, user: userId }, "compacting the database after an erasure failed; it is tried again at the next start");
    }
  }

  /** Resumes unfinished erasures now, then every `intervalS` (an erasure begun by the CLI on another process). */
  startSweep(intervalS: number): Promise<void> {
    const sweep = async () => {
      try {
        for (const { id } of await this.deps.users.erasing()) await this.finish(id);
        await this.deps.alsoSweep?.();
      } catch (err) {
        this.deps.logger.warn({ err }, "erasure sweep failed");
      }
      if (!this.stopped) this.sweepTimer = setTimeout(() => void sweep(), intervalS * 1000).unref();
    };
    return sweep();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.sweepTimer);
    await Promise.all([...this.inFlight.values()]);
  }
}
