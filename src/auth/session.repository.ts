import { and, eq, gt, isNull, lt, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { sessions, users } from "../db/schema.js";
import type { Role } from "./user.repository.js";

/** A live session's row with its user's email and role (what authentication needs, in one query). */
export interface SessionRow {
  sessionId: string;
  userId: string;
  email: string;
  role: Role;
  csrfToken: string;
  expiresAt: Date;
}

const SESSION_INFO = {
  sessionId: sessions.id,
  userId: sessions.userId,
  email: users.email,
  role: sql<Role>`${users.role}`,
  csrfToken: sessions.csrfToken,
  expiresAt: sessions.expiresAt,
};

/**
 * The only code that touches the sessions table. `db` may be a transaction: disabling an account and using a
 * password-reset link end the user's sessions in the same transaction as their own change.
 */
export class SessionRepository {
  constructor(private readonly db: Db) {}

  /** Housekeeping: a user's expired sessions. */
  async deleteExpiredOf(userId: string): Promise<void> {
    await this.db.delete(sessions).where(and(eq(sessions.userId, userId), lt(sessions.expiresAt, new Date())));
  }

  async insert(values: { userId: string; tokenHash: string; csrfToken: string; expiresAt: Date }): Promise<{ id: string }> {
    const [row] = await this.db.insert(sessions).values(values).returning({ id: sessions.id });
    return row;
  }

  /** The live session with this token hash (unexpired, its account not disabled), or undefined. */
  async liveByTokenHash(tokenHash: string): Promise<SessionRow | undefined> {
    const [row] = await this.db
      .select(SESSION_INFO)
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      // Disabling deletes the account's sessions; this also refuses one that a sign-in racing with it created.
      .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, new Date()), isNull(users.disabledAt)));
    return row;
  }

  async liveById(sessionId: string): Promise<SessionRow | undefined> {
    const [row] = await this.db
      .select(SESSION_INFO)
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(and(eq(sessions.id, sessionId), gt(sessions.expiresAt, new Date()), isNull(users.disabledAt)));
    return row;
  }

  async delete(sessionId: string): Promise<void> {
    await this.db.delete(sessions).where(eq(sessions.id, sessionId));
  }

  /**
   * The one place that ends a user's sessions: disabling the account, erasing it, changing or resetting its
   * password. `except` keeps the session that asked (a password change signs out only the others).
   */
  async endAllOf(userId: string, except?: string): Promise<void> {
    const which = except ? and(eq(sessions.userId, userId), ne(sessions.id, except)) : eq(sessions.userId, userId);
    await this.db.delete(sessions).where(which);
  }
}
