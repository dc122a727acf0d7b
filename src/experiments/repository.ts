import { and, desc, eq, gt, ilike, inArray, isNull, lt, ne, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { experimentEvents, experiments, users, workspaces } from "../db/schema.js";
import { ModelRepository, type ModelRow, type NewModel } from "../serving/model-repository.js";
import {
  DELETING,
  isTerminal,
  RUNNING_STATUSES,
  type ExperimentStatus,
  type HistoryEntry,
  type ModelVersionEvent,
  type Progress,
  type TerminalStatus,
} from "./state.js";
import type { ExperimentLabels } from "./request.js";
import { approvalView, type ApprovalView } from "../workspaces/approval-rule.js";
import { WorkspaceRepository } from "../workspaces/workspace.repository.js";

export type ExperimentRow = typeof experiments.$inferSelect;
export type { ModelRow } from "../serving/model-repository.js";
export type EventRow = typeof experimentEvents.$inferSelect;

const nowIso = () => new Date().toISOString();
const UNFINISHED = ["queued", ...RUNNING_STATUSES] as const;

type NewExperiment = {
  /** Who built it ("built by"); the row belongs to workspaceId. */
  userId: string;
  workspaceId: string;
  experimentId: number;
  request: unknown;
  study: unknown;
  requestHash: string;
  name?: string | null;
  description?: string | null;
};

/** `text` as an ILIKE pattern matching it anywhere, literally: its own %, _ and \ are escaped (\ is ILIKE's default escape). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Rows whose name, description, dataset file name (the zip's last path part) or one of its label columns holds
 * `q`, ignoring case. The pattern is a bound parameter; the request's fields are read from its jsonb.
 */
function matchesSearch(q: string) {
  const pattern = containsPattern(q);
  const zipFile = sql`regexp_replace(${experiments.request} ->> 'zip_gcloud', '^.*/', '')`;
  return or(
    ilike(experiments.name, pattern),
    ilike(experiments.description, pattern),
    sql`${zipFile} ilike ${pattern}`,
    sql`exists (select 1 from jsonb_array_elements_text(${experiments.request} -> 'label_cols') as label(col) where label.col ilike ${pattern})`,
  );
}

/** The id of the user's personal workspace, as a subquery. */
export const personalWorkspaceOf = (userId: string) =>
  sql`(select ${workspaces.id} from ${workspaces} where ${workspaces.personalOwnerId} = ${userId})`;

/**
 * The only code that touches the experiments and experiment_events tables; the experiment's models go through
 * the models table's own repository (ModelRepository), in the same transaction where a change spans both.
 */
export class ExperimentRepository {
  private readonly models: ModelRepository;

  constructor(private readonly db: Db) {
    this.models = new ModelRepository(db);
  }

  async insert(values: NewExperiment): Promise<ExperimentRow | null> {
    const history: HistoryEntry[] = [{ status: "queued", at: nowIso() }];
    const rows = await this.db
      .insert(experiments)
      .values({ ...values, status: "queued", history, progress: { fraction: 0, stage: "queued", updated_at: nowIso() } satisfies Progress })
      .onConflictDoNothing()
      .returning();
    if (rows[0]) await this.addEvent(rows[0].id, "status", { status: "queued", at: history[0].at });
    return rows[0] ?? null;
  }

  /**
   * Inserts unless the user already has `cap` unfinished (queued or running) experiments: "over_cap" then. The
   * count and the insert run in one transaction under a per-user advisory lock, so parallel posts cannot overshoot.
   */
  async insertWithinCap(values: NewExperiment, cap: number): Promise<ExperimentRow | null | "over_cap"> {
    const history: HistoryEntry[] = [{ status: "queued", at: nowIso() }];
    const row = await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`builder:experiments:${values.userId}`}))`);
      const [{ n }] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(experiments)
        .where(and(eq(experiments.userId, values.userId), inArray(experiments.status, [...UNFINISHED])));
      if (n >= cap) return "over_cap" as const;
      const rows = await tx
        .insert(experiments)
        .values({
          ...values,
          status: "queued",
          history,
          progress: { fraction: 0, stage: "queued", updated_at: nowIso() } satisfies Progress,
        })
        .onConflictDoNothing()
        .returning();
      return rows[0] ?? null;
    });
    if (row && row !== "over_cap") await this.addEvent(row.id, "status", { status: "queued", at: history[0].at });
    return row;
  }

  /** The workspace's experiment with this number (another workspace's is not found: the caller answers 404). */
  async byNumber(workspaceId: string, experimentId: number): Promise<ExperimentRow | undefined> {
    const rows = await this.db
      .select()
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)));
    return rows[0];
  }

  /** The experiment with this number in the user's personal workspace (the CLI and tests, which name a user). */
  async byUserNumber(userId: string, experimentId: number): Promise<ExperimentRow | undefined> {
    const rows = await this.db
      .select()
      .from(experiments)
      .where(and(eq(experiments.workspaceId, personalWorkspaceOf(userId)), eq(experiments.experimentId, experimentId)));
    return rows[0];
  }

  /** The e-mail of who built a row, or null when the row's builder is gone (user_id null: a former member). */
  async builderEmail(userId: string | null): Promise<string | null> {
    if (!userId) return null;
    const rows = await this.db.select({ email: users.email }).from(users).where(eq(users.id, userId));
    return rows[0]?.email ?? null;
  }

  async byId(id: string): Promise<ExperimentRow | undefined> {
    return (await this.db.select().from(experiments).where(eq(experiments.id, id)))[0];
  }

  async list(workspaceId: string, opts: { status?: string[]; q?: string; limit: number; offset: number }) {
    const where = and(
      eq(experiments.workspaceId, workspaceId),
      opts.status?.length ? inArray(experiments.status, opts.status) : undefined,
      opts.q ? matchesSearch(opts.q) : undefined,
    );
    // With the builder's e-mail ("built by"); null once their account was erased (user_id set NULL).
    const joined = await this.db
      .select({ row: experiments, builtBy: users.email })
      .from(experiments)
      .leftJoin(users, eq(users.id, experiments.userId))
      .where(where)
      .orderBy(desc(experiments.createdAt), desc(experiments.experimentId))
      .limit(opts.limit)
      .offset(opts.offset);
    const rows = joined.map((j) => ({ ...j.row, builtBy: j.builtBy }));
    const [{ total }] = await this.db
      .select({ total: sql<number>`count(*)::int` })
      .from(experiments)
      .where(where);
    return { rows, total };
  }

  /** Experiments a runner should (re)start: queued ones, and running ones whose lease has lapsed or was released. */
  async unfinished(): Promise<ExperimentRow[]> {
    return this.db
      .select()
      .from(experiments)
      .where(inArray(experiments.status, [...UNFINISHED]))
      .orderBy(experiments.createdAt);
  }

  /**
   * Takes the lease when nobody holds a live one. One UPDATE decides, so two runners can never both win:
   * the database row is the lock, whatever the queue did.
   */
  async acquireLease(id: string, owner: string, ttlS: number): Promise<ExperimentRow | null> {
    const rows = await this.db
      .update(experiments)
      .set({
        leaseOwner: owner,
        leaseExpiresAt: sql`now() + make_interval(secs => ${ttlS})`,
        attempts: sql`${experiments.attempts} + 1`,
        updatedAt: sql`now()`,
      })
      .where(
        and(
          eq(experiments.id, id),
          inArray(experiments.status, ["queued", "fetching", "validating", "training", "evaluating", "publishing"]),
          or(isNull(experiments.leaseOwner), lt(experiments.leaseExpiresAt, sql`now()`)),
        ),
      )
      .returning();
    return rows[0] ?? null;
  }

  /** Extends the lease; null when it was lost (expired and taken by another runner). Returns the cancel flag. */
  async renewLease(id: string, owner: string, ttlS: number): Promise<{ cancelRequested: boolean } | null> {
    const rows = await this.db
      .update(experiments)
      .set({ leaseExpiresAt: sql`now() + make_interval(secs => ${ttlS})` })
      .where(and(eq(experiments.id, id), eq(experiments.leaseOwner, owner)))
      .returning({ cancelRequested: experiments.cancelRequested });
    return rows[0] ?? null;
  }

  async releaseLease(id: string, owner: string): Promise<void> {
    await this.db
      .update(experiments)
      .set({ leaseOwner: null, leaseExpiresAt: null })
      .where(and(eq(experiments.id, id), eq(experiments.leaseOwner, owner)));
  }

  /**
   * Moves to `status` (appending to history) only while `owner` holds the lease (or, with owner null, only from
   * `fromStatus`). Returns the new row, or null when the move was refused.
   */
  async transition(
    id: string,
    status: ExperimentStatus,
    opts: {
      owner?: string | null;
      fromStatus?: ExperimentStatus[];
      attempt?: number;
      set?: Partial<typeof experiments.$inferInsert>;
      progress?: Progress;
    } = {},
  ): Promise<ExperimentRow | null> {
    const at = nowIso();
    const entry: HistoryEntry = { status, at, ...(opts.attempt ? { attempt: opts.attempt } : {}) };
    const terminal = isTerminal(status);
    // Nothing moves an experiment out of `deleting`: a job stopping, failing or finishing meanwhile is refused.
    const conditions = [eq(experiments.id, id), ne(experiments.status, DELETING)];
    if (opts.owner) conditions.push(eq(experiments.leaseOwner, opts.owner));
    if (opts.fromStatus) conditions.push(inArray(experiments.status, opts.fromStatus));
    const rows = await this.db
      .update(experiments)
      .set({
        ...opts.set,
        status,
        history: sql`${experiments.history} || ${JSON.stringify([entry])}::jsonb`,
        progress: opts.progress ?? { fraction: terminal ? 1 : 0, stage: status, updated_at: at },
        updatedAt: sql`now()`,
        ...(terminal ? { finishedAt: sql`now()`, leaseOwner: null, leaseExpiresAt: null } : {}),
      })
      .where(and(...conditions))
      .returning();
    if (!rows[0]) return null;
    await this.addEvent(id, "status", {
      status,
      at,
      ...(rows[0].failureReason && status === "failed" ? { reason: rows[0].failureReason } : {}),
    });
    return rows[0];
  }

  async setProgress(id: string, owner: string, progress: Progress): Promise<void> {
    await this.db
      .update(experiments)
      .set({ progress, updatedAt: sql`now()` })
      .where(and(eq(experiments.id, id), eq(experiments.leaseOwner, owner)));
  }

  async update(id: string, owner: string, set: Partial<typeof experiments.$inferInsert>): Promise<void> {
    await this.db
      .update(experiments)
      .set({ ...set, updatedAt: sql`now()` })
      .where(and(eq(experiments.id, id), eq(experiments.leaseOwner, owner)));
  }

  /** Sets the given labels (null clears one); updated_at is left alone: it tracks the run, not its label. */
  async setLabels(id: string, labels: ExperimentLabels): Promise<ExperimentRow | undefined> {
    const set: Partial<typeof experiments.$inferInsert> = {};
    if (labels.name !== undefined) set.name = labels.name;
    if (labels.description !== undefined) set.description = labels.description;
    if (labels.intended_use !== undefined) set.intendedUse = labels.intended_use;
    const rows = await this.db.update(experiments).set(set).where(eq(experiments.id, id)).returning();
    return rows[0];
  }

  /** Flags a running experiment for cancellation; its runner sees the flag at the next heartbeat. */
  async requestCancel(id: string): Promise<void> {
    await this.db
      .update(experiments)
      .set({ cancelRequested: true, updatedAt: sql`now()` })
      .where(eq(experiments.id, id));
  }

  /**
   * Marks the experiment `deleting` and asks its job to stop (the cancel flag the lease heartbeat carries). Also
   * when it already is `deleting` (a repeated DELETE): the row is returned either way; undefined when it is gone.
   */
  async markDeleting(id: string): Promise<ExperimentRow | undefined> {
    const entry: HistoryEntry = { status: DELETING, at: nowIso() };
    const rows = await this.db
      .update(experiments)
      .set({
        status: DELETING,
        cancelRequested: true,
        history: sql`${experiments.history} || ${JSON.stringify([entry])}::jsonb`,
        progress: { fraction: 1, stage: DELETING, updated_at: entry.at } satisfies Progress,
        updatedAt: sql`now()`,
      })
      .where(and(eq(experiments.id, id), ne(experiments.status, DELETING)))
      .returning();
    if (rows[0]) await this.addEvent(id, "status", { status: DELETING, at: entry.at });
    return rows[0] ?? (await this.byId(id));
  }

  /**
   * Every experiment of the user's PERSONAL workspace, marked `deleting` (account erasure); returns all of them. What
   * they built in a shared workspace belongs to that workspace and stays (issue 50 item 6): its user_id becomes null
   * when the users row goes (ON DELETE SET NULL, migration 0027).
   */
  async markAllDeleting(userId: string): Promise<ExperimentRow[]> {
    return this.markAllDeletingIn(personalWorkspaceOf(userId));
  }

  /** Every experiment of a workspace (an id, or a subquery giving one), marked `deleting`; returns all of them. */
  async markAllDeletingIn(workspace: string | SQL): Promise<ExperimentRow[]> {
    const personal = typeof workspace === "string" ? [workspace] : workspace;
    const entry: HistoryEntry = { status: DELETING, at: nowIso() };
    await this.db
      .update(experiments)
      .set({
        status: DELETING,
        cancelRequested: true,
        history: sql`${experiments.history} || ${JSON.stringify([entry])}::jsonb`,
        updatedAt: sql`now()`,
      })
      .where(and(inArray(experiments.workspaceId, personal), ne(experiments.status, DELETING)));
    return this.db.select().from(experiments).where(inArray(experiments.workspaceId, personal));
  }

  /** Deletions to resume: rows in `deleting` (optionally only those untouched for `idleS` seconds). */
  async deleting(idleS = 0): Promise<ExperimentRow[]> {
    const where =
      idleS > 0
        ? and(eq(experiments.status, DELETING), lt(experiments.updatedAt, sql`now() - make_interval(secs => ${idleS})`))
        : eq(experiments.status, DELETING);
    return this.db.select().from(experiments).where(where).orderBy(experiments.createdAt);
  }

  /** Unpublishes every version (the table's trigger tells every serving replica); returns the removed rows. */
  async deleteModels(experimentUuid: string): Promise<ModelRow[]> {
    return this.models.deleteOf(experimentUuid);
  }

  /** The last step of a deletion: the row, and with it (cascade) its events. Only a row already `deleting`. */
  async deleteRow(id: string): Promise<void> {
    await this.db.delete(experiments).where(and(eq(experiments.id, id), eq(experiments.status, DELETING)));
  }

  /**
   * The user's unfinished (queued or running) experiments whose dataset is `objectPath`, or lies under it when it
   * ends with a slash (a folder). zip_gcloud may carry a gs://<bucket>/ (s3://<bucket>/) prefix, which is ignored: BUCKET_URI_PREFIX.
   */
  async unfinishedUsing(workspaceId: string, objectPath: string): Promise<ExperimentRow[]> {
    const zip = sql`regexp_replace(${experiments.request} ->> 'zip_gcloud', '^(gs|s3)://[^/]+/', '')`;
    const match = objectPath.endsWith("/") ? sql`starts_with(${zip}, ${objectPath})` : sql`${zip} = ${objectPath}`;
    return this.db
      .select()
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), inArray(experiments.status, [...UNFINISHED]), match))
      .orderBy(experiments.experimentId);
  }

  async addEvent(experimentUuid: string, type: string, data: unknown): Promise<void> {
    await this.db.insert(experimentEvents).values({ experimentUuid, type, data });
  }

  async eventsAfter(experimentUuid: string, afterSeq: number, limit = 500): Promise<EventRow[]> {
    return this.db
      .select()
      .from(experimentEvents)
      .where(and(eq(experimentEvents.experimentUuid, experimentUuid), gt(experimentEvents.seq, afterSeq)))
      .orderBy(experimentEvents.seq)
      .limit(limit);
  }

  /** The version served: the one made current last (the newest published, unless another was made current again). */
  async currentModel(workspaceId: string, experimentId: number): Promise<ModelRow | undefined> {
    return (await this.models.current(workspaceId, experimentId)) ?? undefined;
  }

  /** The served version of the user's personal workspace's experiment (tests and the CLI, which name a user). */
  async latestModel(userId: string, experimentId: number): Promise<ModelRow | undefined> {
    return (await this.models.latest(userId, experimentId)) ?? undefined;
  }

  /** The workspace's ready Retrospective studies of this experiment's model, oldest first (the model card lists them). */
  async readyRetrospectivesOf(workspaceId: string, experimentId: number): Promise<ExperimentRow[]> {
    return this.db
      .select()
      .from(experiments)
      .where(
        and(
          eq(experiments.workspaceId, workspaceId),
          eq(experiments.status, "ready"),
          sql`${experiments.request} ->> 'study_type' = 'Retrospective'`,
          sql`${experiments.request} ->> 'source_experiment_id' = ${String(experimentId)}`,
        ),
      )
      .orderBy(experiments.experimentId)
      .limit(20);
  }

  async nextModelVersion(experimentUuid: string): Promise<number> {
    return (await this.models.lastVersion(experimentUuid)) + 1;
  }

  /** A version's approval as the model card and the result page show it (issue 50 item 4). */
  async approvalOf(model: ModelRow): Promise<ApprovalView> {
    const required = model.workspaceId ? await new WorkspaceRepository(this.db).requireApproval(model.workspaceId) : false;
    return approvalView(model, required, await this.models.emailsOf(model.approvedBy ? [model.approvedBy] : []));
  }

  /** The e-mails of model approvers, by user id (an erased approver is absent: a former member). */
  async emailsOf(ids: string[]): Promise<Map<string, string>> {
    return this.models.emailsOf(ids);
  }

  async insertModel(values: NewModel): Promise<ModelRow> {
    return this.models.insert(values);
  }

  /**
   * A new version of `from`'s experiment on the same files (store_path) with another manifest (a saved operating
   * point), made current by its insertion; the experiment's metrics become its test metrics and its history says so.
   */
  async publishVersion(from: ModelRow, manifest: unknown, change: { event: ModelVersionEvent; metrics: unknown }): Promise<ModelRow> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.db.transaction(async (tx) => {
          const versions = new ModelRepository(tx);
          const row = await versions.insert({
            userId: from.userId,
            workspaceId: from.workspaceId,
            experimentUuid: from.experimentUuid,
            experimentId: from.experimentId,
            version: (await versions.lastVersion(from.experimentUuid)) + 1,
            kind: from.kind,
            storePath: from.storePath,
            manifest,
            madeCurrentAt: sql`clock_timestamp()`,
          });
          await this.recordVersionChange(tx, row, change);
          return row;
        });
      } catch (err) {
        // Two saves at once took the same number: the unique index refused one; it takes the next.
        if (attempt < 3 && /models_experiment_version|unique/i.test(String((err as Error & { cause?: Error }).cause ?? err))) continue;
        throw err;
      }
    }
  }

  /** Makes a version the one served again (rollback); the experiment's metrics and history follow. */
  async makeModelCurrent(row: ModelRow, change: { event: ModelVersionEvent; metrics: unknown }): Promise<ModelRow> {
    return this.db.transaction(async (tx) => {
      const updated = await new ModelRepository(tx).makeCurrent(row.id);
      await this.recordVersionChange(tx, updated, change);
      return updated;
    });
  }

  private async recordVersionChange(db: Db, row: ModelRow, change: { event: ModelVersionEvent; metrics: unknown }): Promise<void> {
    const at = nowIso();
    const [exp] = await db
      .update(experiments)
      .set({
        metrics: change.metrics,
        history: sql`${experiments.history} || jsonb_build_array(jsonb_build_object('status', ${experiments.status}::text, 'at', ${at}::text, 'event', ${change.event}::text, 'version', ${row.version}::int))`,
        updatedAt: sql`now()`,
      })
      .where(eq(experiments.id, row.experimentUuid))
      .returning({ id: experiments.id });
    if (exp)
      await db
        .insert(experimentEvents)
        .values({ experimentUuid: exp.id, type: "model_version", data: { event: change.event, version: row.version, at } });
  }

  /** The model's PACS send-back setting, or null when the workspace has no such experiment. */
  async pacsSendBack(workspaceId: string, experimentId: number): Promise<boolean | null> {
    const rows = await this.db
      .select({ on: experiments.pacsSendBack })
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)));
    return rows[0]?.on ?? null;
  }

  /** False when the workspace has no such experiment. */
  async setPacsSendBack(workspaceId: string, experimentId: number, on: boolean): Promise<boolean> {
    const rows = await this.db
      .update(experiments)
      .set({ pacsSendBack: on })
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)))
      .returning({ id: experiments.id });
    return rows.length > 0;
  }

  /** The experiment's name (its label), or null. */
  async nameOf(workspaceId: string, experimentId: number): Promise<string | null> {
    const rows = await this.db
      .select({ name: experiments.name })
      .from(experiments)
      .where(and(eq(experiments.workspaceId, workspaceId), eq(experiments.experimentId, experimentId)));
    return rows[0]?.name ?? null;
  }

  /** Where the workspace's objects live (workspaces/storage-prefix.ts); undefined once the workspace is gone. */
  async storagePrefixOf(workspaceId: string): Promise<string | undefined> {
    return new WorkspaceRepository(this.db).storagePrefix(workspaceId);
  }

  async modelsOf(experimentUuid: string): Promise<ModelRow[]> {
    return this.models.versionsOf(experimentUuid);
  }
}

export type { TerminalStatus };
