import { and, desc, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { experiments, models } from "../db/schema.js";

export type ModelRow = typeof models.$inferSelect;
/** The experiment's own labels, shown beside its model (src/experiments owns and edits them). */
export type ExperimentLabelsRow = { name: string | null; description: string | null };

/** Reads published model rows; the experiments area writes them. */
export class ModelRepository {
  constructor(private readonly db: Db) {}

  /**
   * The current version of one of the user's experiments, or null: the one made current last (the newest
   * published unless an older one was made current again; migration 0010).
   */
  async latest(userId: string, experimentId: number): Promise<ModelRow | null> {
    const rows = await this.db
      .select()
      .from(models)
      .where(and(eq(models.userId, userId), eq(models.experimentId, experimentId)))
      .orderBy(desc(models.madeCurrentAt), desc(models.version))
      .limit(1);
    return rows[0] ?? null;
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

  /** The current version of each of the user's experiments, by experiment number, with that experiment's labels. */
  async listLatest(userId: string): Promise<Array<ModelRow & { labels: ExperimentLabelsRow }>> {
    const rows = await this.db
      .select({ model: models, name: experiments.name, description: experiments.description })
      .from(models)
      .innerJoin(experiments, eq(experiments.id, models.experimentUuid))
      .where(eq(models.userId, userId))
      .orderBy(models.experimentId, desc(models.madeCurrentAt), desc(models.version));
    const seen = new Set<number>();
    return rows
      .filter((r) => (seen.has(r.model.experimentId) ? false : (seen.add(r.model.experimentId), true)))
      .map((r) => ({ ...r.model, labels: { name: r.name, description: r.description } }));
  }

  /** The state of one of the user's experiments (queued, running, failed, ...), or null when the user has no such experiment. */
  async experimentStatus(userId: string, experimentId: number): Promise<string | null> {
    const rows = await this.db
      .select({ status: experiments.status })
      .from(experiments)
      .where(and(eq(experiments.userId, userId), eq(experiments.experimentId, experimentId)));
    return rows[0]?.status ?? null;
  }

  /** The labels of the experiment a model row came from (kept out of latest(): the prediction path never needs them). */
  async labelsOf(experimentUuid: string): Promise<ExperimentLabelsRow> {
    const rows = await this.db
      .select({ name: experiments.name, description: experiments.description })
      .from(experiments)
      .where(eq(experiments.id, experimentUuid));
    return rows[0] ?? { name: null, description: null };
  }
}
