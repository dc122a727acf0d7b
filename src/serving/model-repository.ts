import { and, desc, eq } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { models } from "../db/schema.js";

export type ModelRow = typeof models.$inferSelect;

/** Reads published model rows; the experiments area writes them. */
export class ModelRepository {
  constructor(private readonly db: Db) {}

  /** The newest version of one of the user's experiments, or null. */
  async latest(userId: string, experimentId: number): Promise<ModelRow | null> {
    const rows = await this.db
      .select()
      .from(models)
      .where(and(eq(models.userId, userId), eq(models.experimentId, experimentId)))
      .orderBy(desc(models.version))
      .limit(1);
    return rows[0] ?? null;
  }

  /** The newest version of each of the user's experiments, by experiment number. */
  async listLatest(userId: string): Promise<ModelRow[]> {
    const rows = await this.db.select().from(models).where(eq(models.userId, userId)).orderBy(models.experimentId, desc(models.version));
    const seen = new Set<number>();
    return rows.filter((r) => (seen.has(r.experimentId) ? false : (seen.add(r.experimentId), true)));
  }
}
