import { desc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { auditEvents } from "../db/schema.js";

export type AuditRow = typeof auditEvents.$inferSelect;
export type NewAuditRow = typeof auditEvents.$inferInsert;

/** The only code that touches the audit_events table: appends and reads one workspace's entries, never changes them. */
export class AuditRepository {
  constructor(private readonly db: Db) {}

  async insert(values: NewAuditRow): Promise<void> {
    await this.db.insert(auditEvents).values(values);
  }

  /** One page of the workspace's entries, newest first. */
  page(workspaceId: string, page: { limit: number; offset: number }): Promise<AuditRow[]> {
    return this.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.workspaceId, workspaceId))
      .orderBy(desc(auditEvents.seq))
      .limit(page.limit)
      .offset(page.offset);
  }

  async count(workspaceId: string): Promise<number> {
    const [{ total }] = await this.db
      .select({ total: sql<number>`count(*)::int` })
      .from(auditEvents)
      .where(eq(auditEvents.workspaceId, workspaceId));
    return total;
  }

  /** Every entry of the workspace, oldest first. */
  all(workspaceId: string): Promise<AuditRow[]> {
    return this.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspaceId)).orderBy(auditEvents.seq);
  }
}
