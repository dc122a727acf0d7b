import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { pacsConnections } from "../db/schema.js";
import { ExperimentRepository } from "../experiments/repository.js";
import type { RequestWorkspace } from "../auth/types.js";
import { WorkspaceRepository } from "../workspaces/workspace.repository.js";

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

  /** The model's send-back setting, or null when the workspace has no such experiment. */
  async sendBack(workspaceId: string, experimentId: number): Promise<boolean | null> {
    return this.experiments.pacsSendBack(workspaceId, experimentId);
  }

  async setSendBack(workspaceId: string, experimentId: number, on: boolean): Promise<boolean> {
    return this.experiments.setPacsSendBack(workspaceId, experimentId, on);
  }

  /** The experiment's name (its label), or null. */
  async modelName(workspaceId: string, experimentId: number): Promise<string | null> {
    return this.experiments.nameOf(workspaceId, experimentId);
  }

  /**
   * The user's personal workspace: a PACS connection and its auto-scoring rules are the user's own, and name the
   * experiments of their personal workspace (issue 50 leaves shared PACS connections for later).
   */
  async personalWorkspace(userId: string): Promise<RequestWorkspace | undefined> {
    return new WorkspaceRepository(this.db).resolve(userId);
  }
}
