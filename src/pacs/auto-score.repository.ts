import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { pacsAutoScored, pacsAutoScoreRules, pacsConnections, pacsFeedCursors } from "../db/schema.js";

export type RuleRow = typeof pacsAutoScoreRules.$inferSelect;
export type ScoredRow = typeof pacsAutoScored.$inferSelect;
export type NewScoredRow = typeof pacsAutoScored.$inferInsert;
type NewRuleRow = Omit<typeof pacsAutoScoreRules.$inferInsert, "updatedAt">;

/**
 * The only code that touches the auto-scoring tables: each model's rule, each user's feed cursor with its lease,
 * and each instance's outcome (PacsAutoScore says when they are written and why).
 */
export class AutoScoreRepository {
  constructor(private readonly db: Db) {}

  async rule(userId: string, experimentId: number): Promise<RuleRow | undefined> {
    const rows = await this.db
      .select()
      .from(pacsAutoScoreRules)
      .where(and(eq(pacsAutoScoreRules.userId, userId), eq(pacsAutoScoreRules.experimentId, experimentId)));
    return rows[0];
  }

  async saveRule(row: NewRuleRow): Promise<RuleRow> {
    const { userId: _u, experimentId: _e, ...set } = row;
    const [saved] = await this.db
      .insert(pacsAutoScoreRules)
      .values(row)
      .onConflictDoUpdate({ target: [pacsAutoScoreRules.userId, pacsAutoScoreRules.experimentId], set: { ...set, updatedAt: sql`now()` } })
      .returning();
    return saved;
  }

  /** The user's enabled rules. */
  enabledRules(userId: string): Promise<RuleRow[]> {
    return this.db
      .select()
      .from(pacsAutoScoreRules)
      .where(and(eq(pacsAutoScoreRules.userId, userId), eq(pacsAutoScoreRules.enabled, true)));
  }

  /** Users with a rule on and a PACS connection. */
  usersWithRuleOn(): Promise<Array<{ userId: string }>> {
    return this.db
      .selectDistinct({ userId: pacsAutoScoreRules.userId })
      .from(pacsAutoScoreRules)
      .innerJoin(pacsConnections, eq(pacsConnections.userId, pacsAutoScoreRules.userId))
      .where(eq(pacsAutoScoreRules.enabled, true));
  }

  /** Starts the user's feed at `lastSeq` unless it has a cursor already. */
  async startCursor(userId: string, lastSeq: number): Promise<void> {
    await this.db.insert(pacsFeedCursors).values({ userId, lastSeq }).onConflictDoNothing();
  }

  /** Takes or renews the lease on the user's feed for `owner`; its cursor, or null when another owner holds it. */
  async claim(userId: string, owner: string, leaseMs: number): Promise<number | null> {
    const until = sql`now() + make_interval(secs => ${leaseMs / 1000})`;
    const rows = await this.db
      .update(pacsFeedCursors)
      .set({ leaseOwner: owner, leaseUntil: until })
      .where(
        and(
          eq(pacsFeedCursors.userId, userId),
          or(isNull(pacsFeedCursors.leaseOwner), eq(pacsFeedCursors.leaseOwner, owner), lt(pacsFeedCursors.leaseUntil, sql`now()`)),
        ),
      )
      .returning({ lastSeq: pacsFeedCursors.lastSeq });
    return rows[0]?.lastSeq ?? null;
  }

  async releaseLeases(owner: string): Promise<void> {
    await this.db.update(pacsFeedCursors).set({ leaseOwner: null, leaseUntil: null }).where(eq(pacsFeedCursors.leaseOwner, owner));
  }

  /** Moves the cursor and writes the outcomes in one transaction, while `owner` still holds the lease; false when it does not. */
  async commit(userId: string, owner: string, seq: number, rows: NewScoredRow[]): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const moved = await tx
        .update(pacsFeedCursors)
        .set({ lastSeq: seq, updatedAt: sql`now()` })
        .where(and(eq(pacsFeedCursors.userId, userId), eq(pacsFeedCursors.leaseOwner, owner)))
        .returning({ userId: pacsFeedCursors.userId });
      if (!moved.length) return false;
      if (rows.length) await tx.insert(pacsAutoScored).values(rows).onConflictDoNothing();
      return true;
    });
  }

  /** Whether the model's outcome for this instance is written already. */
  async scored(userId: string, experimentId: number, sopInstanceUid: string): Promise<boolean> {
    const done = await this.db
      .select({ sop: pacsAutoScored.sopInstanceUid })
      .from(pacsAutoScored)
      .where(
        and(
          eq(pacsAutoScored.userId, userId),
          eq(pacsAutoScored.experimentId, experimentId),
          eq(pacsAutoScored.sopInstanceUid, sopInstanceUid),
        ),
      );
    return done.length > 0;
  }

  /** The model's last outcomes, newest first. */
  outcomes(userId: string, experimentId: number, limit: number): Promise<ScoredRow[]> {
    return this.db
      .select()
      .from(pacsAutoScored)
      .where(and(eq(pacsAutoScored.userId, userId), eq(pacsAutoScored.experimentId, experimentId)))
      .orderBy(sql`${pacsAutoScored.at} desc`)
      .limit(limit);
  }
}
