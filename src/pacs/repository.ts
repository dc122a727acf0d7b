import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { experiments, pacsConnections } from "../db/schema.js";

export type PacsConnectionRow = typeof pacsConnections.$inferSelect;

/** The PACS connections (one per user) and the per-model send-back setting. */
export class PacsRepository {
  constructor(private readonly db: Db) {}

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
    const rows = await this.db
      .select({ on: experiments.pacsSendBack })
      .from(experiments)
      .where(and(eq(experiments.userId, userId), eq(experiments.experimentId, experimentId)));
    return rows[0]?.on ?? null;
  }

  async setSendBack(userId: string, experimentId: number, on: boolean): Promise<boolean> {
    const rows = await this.db
      .update(experiments)
      .set({ pacsSendBack: on })
      .where(and(eq(experiments.userId, userId), eq(experiments.experimentId, experimentId)))
      .returning({ id: experiments.id });
    return rows.length > 0;
  }

  /** The experiment's name (its label), or null. */
  async modelName(userId: string, experimentId: number): Promise<string | null> {
    const rows = await this.db
      .select({ name: experiments.name })
      .from(experiments)
      .where(and(eq(experiments.userId, userId), eq(experiments.experimentId, experimentId)));
    return rows[0]?.name ?? null;
  }
}
