import type { Db } from "../db/client.js";
import { ApiError, msg, detail } from "../errors.js";
import { hashPassword, verifyPassword } from "./secrets.js";
import { SessionRepository } from "./session.repository.js";
import { UserRepository } from "./user.repository.js";
import { passwordProblem } from "./user.service.js";

/** The dashboard's own account operations: first-run detection and changing one's password. */
export class AccountService {
  private readonly users: UserRepository;
  private readonly sessions: SessionRepository;

  constructor(db: Db) {
    this.users = new UserRepository(db);
    this.sessions = new SessionRepository(db);
  }

  /** True once any user exists; the sign-in page shows the first-run hint until then. */
  async anyUser(): Promise<boolean> {
    return this.users.anyExists();
  }

  /**
   * Checks the current password, stores the new one, and ends the user's other sessions (a stolen session
   * must not outlive the password change); the session that asked stays signed in.
   */
  async changePassword(input: { userId: string; sessionId?: string; current: string; next: string }): Promise<void> {
    const row = await this.users.rowById(input.userId);
    if (!row) throw new ApiError(404, "not_found", msg("auth.user_gone"));
    if (!(await verifyPassword(input.current, row.passwordHash))) {
      throw new ApiError(400, "invalid_request", msg("auth.wrong_current_password"), [
        detail("current_password", msg("detail.not_correct")),
      ]);
    }
    const weak = passwordProblem(input.next);
    if (weak) throw new ApiError(400, "invalid_request", weak, [detail("new_password", weak)]);
    await this.users.setPasswordHash(input.userId, await hashPassword(input.next));
    await this.sessions.endAllOf(input.userId, input.sessionId);
  }
}
