import { and, desc, eq, inArray, max, sql } from "drizzle-orm";
import type { PgInsertValue } from "drizzle-orm/pg-core";
import type { Db } from "../db/client.js";
import { experiments, models, users, workspaces } from "../db/schema.js";
import { BoundedExperimentReads } from "../experiments/bounded-reads.repository.js";

export type ModelRow = typeof models.$inferSelect;
/** A version without its manifest. */
export type ModelHead = Pick<ModelRow, "id" | "experimentId" | "version" | "kind" | "createdAt">;
/** The current version of an experiment is the one made current last (migration 0010), then the newest. */
const currentOf = (workspaceId: string, experimentId: number) =>
  and(eq(models.workspaceId, workspaceId), eq(models.experimentId, experimentId));
/** The user's personal workspace's id, as a subquery (lookups that name a user: the CLI and tests). */
const personalOf = (userId: string) => sql`(select ${workspaces.id} from ${workspaces} where ${workspaces.personalOwnerId} = ${userId})`;
const CURRENT_FIRST = [desc(models.madeCurrentAt), desc(models.version)] as const;
/** A models row to insert (its columns may be SQL, e.g. made current by the insertion's own clock). */
export type NewModel = PgInsertValue<typeof models>;
/** The experiment's own labels, shown beside its model (src/experiments owns and edits them). */
export type ExperimentLabelsRow = { name: string | null; description: string | null };

const columnsOf = sql`(${models.manifest} -> 'input' -> 'columns')`;

/** The manifest without its columns' `codes` (the served manifest's schema allows no count in their place). */
const manifestWithoutCodes = sql<unknown>`case when jsonb_typeof(${columnsOf}) = 'array' then jsonb_set(${models.manifest}, '{input,columns}',
  coalesce((select jsonb_agg(c - 'codes' order by n) from jsonb_array_elements(${columnsOf}) with ordinality as t(c, n)), '[]'::jsonb))
  else ${models.manifest} end`;

/** Per categorical column with codes, how many: counted in the database. */
const codeCounts = sql<Record<string, number> | null>`case when jsonb_typeof(${columnsOf}) = 'array' then
  (select jsonb_object_agg(c ->> 'name', (select count(*) from jsonb_object_keys(c -> 'codes')))
    from jsonb_array_elements(${columnsOf}) as t(c) where jsonb_typeof(c -> 'codes') = 'object') end`;

/**
 * The only code that touches the models table: serving reads the published rows, the experiments area publishes,
 * re-publishes (operating points) and deletes them through it. `db` may be a transaction (a new version is
 * written in one with its experiment's history). An experiment's state and labels come from the experiments
 * area's bounded reads.
 */
export class ModelRepository {
  constructor(private readonly db: Db) {}

  /**
   * The current version of one of the workspace's experiments, or null: the one made current last (the newest
   * published unless an older one was made current again; migration 0010).
   */
  async current(workspaceId: string, experimentId: number): Promise<ModelRow | null> {
    const rows = await this.db
      .select()
      .from(models)
      .where(currentOf(workspaceId, experimentId))
      .orderBy(...CURRENT_FIRST)
      .limit(1);
    return rows[0] ?? null;
  }

  /** current() in the user's personal workspace (the CLI and tests, which name a user). */
  async latest(userId: string, experimentId: number): Promise<ModelRow | null> {
    const rows = await this.db
      .select()
      .from(models)
      .where(and(eq(models.workspaceId, personalOf(userId)), eq(models.experimentId, experimentId)))
      .orderBy(...CURRENT_FIRST)
      .limit(1);
    return rows[0] ?? null;
  }

  /** The current version as current() picks it, without its manifest (the chat reads that once per version). */
  async latestHead(workspaceId: string, experimentId: number): Promise<ModelHead | null> {
    const [row] = await this.db
      .select({ id: models.id, experimentId: models.experimentId, version: models.version, kind: models.kind, createdAt: models.createdAt })
      .from(models)
      .where(currentOf(workspaceId, experimentId))
      .orderBy(...CURRENT_FIRST)
      .limit(1);
    return row ?? null;
  }

  /** A version's manifest without its columns' codes, and how many codes each categorical column has. */
  async manifestWithoutCodes(modelId: string): Promise<{ manifest: unknown; categories: Record<string, number> | null } | null> {
    const [row] = await this.db
      .select({ manifest: manifestWithoutCodes, categories: codeCounts })
      .from(models)
      .where(eq(models.id, modelId));
    return row ?? null;
  }

  /** Which of these model ids are still published (a row exists). */
  async existingIds(ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await this.db.select({ id: models.id }).from(models).where(inArray(models.id, ids));
    return new Set(rows.map((r) => r.id));
  }

  async byId(id: string): Promise<ModelRow | null> {
    const rows = await this.db.select().from(models).where(eq(models.id, id));
    return rows[0] ?? null;
  }

  /** The current version of each of the workspace's experiments, by experiment number, with that experiment's labels. */
  async listLatest(workspaceId: string): Promise<Array<ModelRow & { labels: ExperimentLabelsRow }>> {
    const rows = await this.db
      .select({ model: models, name: experiments.name, description: experiments.description })
      .from(models)
      .innerJoin(experiments, eq(experiments.id, models.experimentUuid))
      .where(eq(models.workspaceId, workspaceId))
      .orderBy(models.experimentId, desc(models.madeCurrentAt), desc(models.version));
    const seen = new Set<number>();
    return rows
      .filter((r) => (seen.has(r.model.experimentId) ? false : (seen.add(r.model.experimentId), true)))
      .map((r) => ({ ...r.model, labels: { name: r.name, description: r.description } }));
  }

  /** The state of one of the workspace's experiments (queued, running, failed, ...), or null when it has no such experiment. */
  async experimentStatus(workspaceId: string, experimentId: number): Promise<string | null> {
    return new BoundedExperimentReads(this.db).status(workspaceId, experimentId);
  }

  /** The labels of the experiment a model row came from (kept out of latest(): the prediction path never needs them). */
  async labelsOf(experimentUuid: string): Promise<ExperimentLabelsRow> {
    return new BoundedExperimentReads(this.db).labels(experimentUuid);
  }

  /** Unpublishes every version of an experiment; returns the removed rows. */
  async deleteOf(experimentUuid: string): Promise<ModelRow[]> {
    return this.db.delete(models).where(eq(models.experimentUuid, experimentUuid)).returning();
  }

  /** The highest version an experiment has published, 0 when none. */
  async lastVersion(experimentUuid: string): Promise<number> {
    const [{ v }] = await this.db
      .select({ v: max(models.version) })
      .from(models)
      .where(eq(models.experimentUuid, experimentUuid));
    return v ?? 0;
  }

  async insert(values: NewModel): Promise<ModelRow> {
    const rows = await this.db.insert(models).values(values).returning();
    return rows[0];
  }

  /** Makes a version the one served (the current one is the one made current last). */
  async makeCurrent(id: string): Promise<ModelRow> {
    const [updated] = await this.db
      .update(models)
      .set({ madeCurrentAt: sql`clock_timestamp()` })
      .where(eq(models.id, id))
      .returning();
    return updated;
  }

  /**
   * Records the approval of a version that has none yet (issue 50 item 4); the row as approved, or null when another
   * approval came first (the caller answers that it is already approved).
   */
  async approve(id: string, approverId: string, intendedUse: string): Promise<ModelRow | null> {
    const [row] = await this.db
      .update(models)
      .set({ approvedBy: approverId, approvedAt: sql`clock_timestamp()`, approvedIntendedUse: intendedUse })
      .where(and(eq(models.id, id), sql`${models.approvedAt} is null`))
      .returning();
    return row ?? null;
  }

  /** The e-mails of these users, by id; an erased user is absent (shown as a former member). */
  async emailsOf(ids: string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const rows = await this.db.select({ id: users.id, email: users.email }).from(users).where(inArray(users.id, ids));
    return new Map(rows.map((r) => [r.id, r.email]));
  }

  /** Every version of an experiment's model, oldest first. */
  async versionsOf(experimentUuid: string): Promise<ModelRow[]> {
    return this.db.select().from(models).where(eq(models.experimentUuid, experimentUuid)).orderBy(models.version);
  }
}
