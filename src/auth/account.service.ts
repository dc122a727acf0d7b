import { and, eq, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { sessions, users } from "../db/schema.js";
import { ApiError, msg, detail } from "../errors.js";
import { hashPassword, verifyPassword } from "./secrets.js";
import { passwordProblem } from "./user.service.js";

/** The dashboard's own account operations: first-run detection and changing one's password. */
export class AccountService {
  constructor(private readonly db: Db) {}

  /** True once any user exists; the sign-in page shows the first-run hint until then. */
  async anyUser(): Promise<boolean> {
    const [row] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(users)
      .limit(1);
    return Number(row?.n ?? 0) > 0;
  }

  /**
   * Checks the current password, stores the new one, and ends the user's other sessions (a stolen session
   * must not outlive the password change); the session that asked stays signed in.
   */
  async changePassword(input: { userId: string; sessionId?: string; current: string; next: string }): Promise<void> {
    const [row] = await this.db.select().from(users).where(eq(users.id, input.userId));
    if (!row) throw new ApiError(404, "not_found", msg("auth.user_gone"));
    if (!(await verifyPassword(input.current, row.passwordHash))) {
      throw new ApiError(400, "invalid_request", msg("auth.wrong_current_password"), [
        detail("current_password", msg("detail.not_correct")),
      ]);
    }
    const weak = passwordProblem(input.next);
    if (weak) throw new ApiError(400, "invalid_request", weak, [detail("new_password", weak)]);
    await this.db
      .update(users)
      .set({ passwordHash: await hashPassword(input.next) })
      .where(eq(users.id, input.userId));
    const others = input.sessionId
      ? and(eq(sessions.userId, input.userId), ne(sessions.id, input.sessionId))
      : eq(sessions.userId, input.userId);
    await this.db.delete(sessions).where(others);
  }
}
