import { and, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { batches } from "../db/schema.js";
import { say, storedMessage, type Message } from "../errors.js";

export type BatchRow = typeof batches.$inferSelect;
export type BatchStatus = "queued" | "running" | "done" | "failed";

/**
 * A batch's state as its events stream sends it: the row at one moment, numbered by the row's updated_at in
 * microseconds since the epoch (every write to the row moves it on, so the number only grows).
 */
export interface BatchSnapshot {
  seq: number;
  /** null: the batch is gone (its experiment was deleted): the stream's last event. */
  row: BatchRow | null;
}

/** The batches table: always read through the owner's user id. */
export class BatchRepository {
  constructor(private readonly db: Db) {}

  async insert(values: typeof batches.$inferInsert): Promise<BatchRow> {
    const [row] = await this.db.insert(batches).values(values).returning();
    return row;
  }

  /** The workspace's batch (another workspace's is undefined: the caller answers 404). */
  async get(workspaceId: string, id: string): Promise<BatchRow | undefined> {
    const [row] = await this.db
      .select()
      .from(batches)
      .where(and(eq(batches.workspaceId, workspaceId), eq(batches.id, id)));
    return row;
  }

  /**
   * The batch's events source for the shared poller (event-hub.ts): its row, when written since `afterSeq`. The
   * caller checked the owner before it opened the stream.
   */
  async eventsAfter(id: string, afterSeq: number): Promise<BatchSnapshot[]> {
    const [found] = await this.db
      .select({ row: batches, seq: sql<string>`floor(extract(epoch from ${batches.updatedAt}) * 1000000)::bigint` })
      .from(batches)
      .where(eq(batches.id, id));
    if (!found) return [{ seq: afterSeq + 1, row: null }];
    const seq = Number(found.seq);
    return seq > afterSeq ? [{ seq, row: found.row }] : [];
  }

  async listForExperiment(workspaceId: string, experimentId: number, limit = 20): Promise<BatchRow[]> {
    return this.db
      .select()
      .from(batches)
      .where(and(eq(batches.workspaceId, workspaceId), eq(batches.experimentId, experimentId)))
      .orderBy(desc(batches.createdAt))
      .limit(limit);
  }

  /** Every batch scored with the experiment's models (its deletion removes their results too). */
  async idsOfExperiment(experimentUuid: string): Promise<string[]> {
    return (await this.db.select({ id: batches.id }).from(batches).where(eq(batches.experimentUuid, experimentUuid))).map((r) => r.id);
  }

  async update(
    id: string,
    values: Partial<
      Pick<
        BatchRow,
        | "status"
        | "overlays"
        | "total"
        | "done"
        | "failed"
        | "flagged"
        | "pacsSent"
        | "pacsFailed"
        | "failureReason"
        | "failureText"
        | "finishedAt"
      >
    >,
  ): Promise<void> {
    await this.db
      .update(batches)
      .set({ ...values, updatedAt: sql`now()` })
      .where(eq(batches.id, id));
  }

  /** Marks batches as alive (queued behind another in a live process). */
  async touch(ids: string[]): Promise<void> {
    await this.db
      .update(batches)
      .set({ updatedAt: sql`now()` })
      .where(inArray(batches.id, ids));
  }

  /**
   * Batches whose runner stopped (its process died): not updated for `staleSeconds` while queued or running. A
   * running batch is touched every second it makes progress and a queued one every 30 s (BatchService.keepAlive), so
   * another replica's live batch is never taken for dead.
   */
  async failStale(staleSeconds: number, reason: Message): Promise<number> {
    const rows = await this.db
      .update(batches)
      .set({
        status: "failed",
        failureReason: say(reason, "en"),
        failureText: storedMessage(reason),
        finishedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(
        and(inArray(batches.status, ["queued", "running"]), lt(batches.updatedAt, sql`now() - make_interval(secs => ${staleSeconds})`)),
      )
      .returning({ id: batches.id });
    return rows.length;
  }
}
