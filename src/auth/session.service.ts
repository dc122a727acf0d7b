import type { Db } from "../db/client.js";
import { randomToken, sha256Hex } from "./secrets.js";
import { SessionRepository, type SessionRow } from "./session.repository.js";
import type { Role } from "./user.service.js";

export const SESSION_COOKIE = "builder_session";

export type SessionInfo = SessionRow;

/**
 * Dashboard sessions. The cookie carries a 256-bit random token; the table keeps only its SHA-256,
 * so a database dump does not let anyone sign in. Each session has its own CSRF token.
 */
export class SessionService {
  private readonly repo: SessionRepository;

  constructor(
    db: Db,
    private readonly ttlHours: number,
  ) {
    this.repo = new SessionRepository(db);
  }

  async create(user: { id: string; email: string; role: Role }): Promise<SessionInfo & { token: string }> {
    const token = randomToken(32);
    const csrfToken = randomToken(24);
    const expiresAt = new Date(Date.now() + this.ttlHours * 3600_000);
    // Housekeeping that costs nothing extra: a user's expired sessions go when they sign in again.
    await this.repo.deleteExpiredOf(user.id);
    const row = await this.repo.insert({ userId: user.id, tokenHash: sha256Hex(token), csrfToken, expiresAt });
    return { token, sessionId: row.id, userId: user.id, email: user.email, role: user.role, csrfToken, expiresAt };
  }

  /** The live session for a cookie token, or undefined (unknown or expired). */
  async lookup(token: string): Promise<SessionInfo | undefined> {
    if (!token || token.length > 100) return undefined;
    return this.repo.liveByTokenHash(sha256Hex(token));
  }

  async byId(sessionId: string): Promise<SessionInfo | undefined> {
    return this.repo.liveById(sessionId);
  }

  async delete(sessionId: string): Promise<void> {
    await this.repo.delete(sessionId);
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
