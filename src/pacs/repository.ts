import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { pacsConnections } from "../db/schema.js";
import { ExperimentRepository } from "../experiments/repository.js";

export type PacsConnectionRow = typeof pacsConnections.$inferSelect;

/** The PACS connections (one per user; the only code that touches their table) and the per-model send-back setting. */
export class PacsRepository {
  private readonly experiments: ExperimentRepository;

  constructor(private readonly db: Db) {
    this.experiments = new ExperimentRepository(db);
  }

  async get(userId: string): Promise<PacsConnectionRow | null> {
    const rows = await this.db.select().from(pacsConnections).where(eq(pacsConnections.userId, userId));
    return rows[0] ?? null;
  }

  async upsert(row: Omit<PacsConnectionRow, "updatedAt">): Promise<PacsConnectionRow> {
    const { userId: _u, ...set } = row;
    const [saved] = await this.db
      .insert(pacsConnections)
      .values(row)
      .onConflictDoUpdate({ target: pacsConnections.userId, set: { ...set, updatedAt: sql`now()` } })
      .returning();
    return saved;
  }

  async remove(userId: string): Promise<boolean> {
    return (await this.db.delete(pacsConnections).where(eq(pacsConnections.userId, userId)).returning()).length > 0;
  }

  /** The model's send-back setting, or null when the user has no such experiment. */
  async sendBack(userId: string, experimentId: number): Promise<boolean | null> {
    return this.experiments.pacsSendBack(userId, experimentId);
  }

  async setSendBack(userId: string, experimentId: number, on: boolean): Promise<boolean> {
    return this.experiments.setPacsSendBack(userId, experimentId, on);
  }

  /** The experiment's name (its label), or null. */
  async modelName(userId: string, experimentId: number): Promise<string | null> {
    return this.experiments.nameOf(userId, experimentId);
  }
}
