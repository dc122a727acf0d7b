import { desc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { auditEvents } from "../db/schema.js";

export type AuditRow = typeof auditEvents.$inferSelect;
export type NewAuditRow = typeof auditEvents.$inferInsert;

/** The only code that touches the audit_events table: appends and reads one actor's entries, never changes them. */
export class AuditRepository {
  constructor(private readonly db: Db) {}

  async insert(values: NewAuditRow): Promise<void> {
    await this.db.insert(auditEvents).values(values);
  }

  /** One page of the actor's entries, newest first. */
  page(actorId: string, page: { limit: number; offset: number }): Promise<AuditRow[]> {
    return this.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.actorId, actorId))
      .orderBy(desc(auditEvents.seq))
      .limit(page.limit)
      .offset(page.offset);
  }

  async count(actorId: string): Promise<number> {
    const [{ total }] = await this.db
      .select({ total: sql<number>`count(*)::int` })
      .from(auditEvents)
      .where(eq(auditEvents.actorId, actorId));
    return total;
  }

  /** Every entry of the actor, oldest first. */
  all(actorId: string): Promise<AuditRow[]> {
    return this.db.select().from(auditEvents).where(eq(auditEvents.actorId, actorId)).orderBy(auditEvents.seq);
  }
}
