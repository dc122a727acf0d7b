import { and, eq, gt, isNull, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { sessions, users } from "../db/schema.js";
import { randomToken, sha256Hex } from "./secrets.js";
import type { Role } from "./user.service.js";

export const SESSION_COOKIE = "builder_session";

export interface SessionInfo {
  sessionId: string;
  userId: string;
  email: string;
  role: Role;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * Dashboard sessions. The cookie carries a 256-bit random token; the table keeps only its SHA-256,
 * so a database dump does not let anyone sign in. Each session has its own CSRF token.
 */
/** What a live session carries: its row and its user's email and role. */
const SESSION_INFO = {
  sessionId: sessions.id,
  userId: sessions.userId,
  email: users.email,
  role: sql<Role>`${users.role}`,
  csrfToken: sessions.csrfToken,
  expiresAt: sessions.expiresAt,
};

export class SessionService {
  constructor(
    private readonly db: Db,
    private readonly ttlHours: number,
  ) {}

  async create(user: { id: string; email: string; role: Role }): Promise<SessionInfo & { token: string }> {
    const token = randomToken(32);
    const csrfToken = randomToken(24);
    const expiresAt = new Date(Date.now() + this.ttlHours * 3600_000);
    // Housekeeping that costs nothing extra: a user's expired sessions go when they sign in again.
    await this.db.delete(sessions).where(and(eq(sessions.userId, user.id), lt(sessions.expiresAt, new Date())));
    const [row] = await this.db
      .insert(sessions)
      .values({ userId: user.id, tokenHash: sha256Hex(token), csrfToken, expiresAt })
      .returning();
    return { token, sessionId: row.id, userId: user.id, email: user.email, role: user.role, csrfToken, expiresAt };
  }

  /** The live session for a cookie token, or undefined (unknown or expired). */
  async lookup(token: string): Promise<SessionInfo | undefined> {
    if (!token || token.length > 100) return undefined;
    const [row] = await this.db
      .select(SESSION_INFO)
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      // Disabling deletes the account's sessions; this also refuses one that a sign-in racing with it created.
      .where(and(eq(sessions.tokenHash, sha256Hex(token)), gt(sessions.expiresAt, new Date()), isNull(users.disabledAt)));
    return row;
  }

  async byId(sessionId: string): Promise<SessionInfo | undefined> {
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
}

/** The value of one cookie from a Cookie header (no dependency for a ten-line parser). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}
