import { z } from "zod";
import type { Db } from "../db/client.js";
import { ApiError, invalid, msg, detail, type ErrorDetail, type Message } from "../errors.js";
import { dummyPasswordHash, hashPassword, verifyPassword } from "./secrets.js";
import { AdminRepository } from "./admin.repository.js";
import { ApiKeyRepository } from "./api-key.repository.js";
import { SessionRepository } from "./session.repository.js";
import { UserRepository, type Role, type User } from "./user.repository.js";
import { refuseIfSoleOwnerOfSharedWorkspaces } from "../erasure/sole-owner.js";

export const MIN_PASSWORD_LENGTH = 12;

export { ROLES, type Role, type User } from "./user.repository.js";

export const emailSchema = z.email(invalid("detail.invalid_email"));

/** Emails are compared case-insensitively (unique index on lower(email)); we store them lower-cased. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function passwordProblem(password: string): Message | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return msg("auth.password_too_short", { min: MIN_PASSWORD_LENGTH });
  if (password.length > 1024) return msg("auth.password_too_long");
  return undefined;
}

/** The normalised email, or 400 naming each bad field: a bad email or weak password (the same for every address). */
export function checkedEmail(input: { email: string; password: string }): string {
  const email = normaliseEmail(input.email);
  const details: ErrorDetail[] = [];
  if (!emailSchema.safeParse(email).success) details.push(detail("email", msg("detail.invalid_email")));
  const weak = passwordProblem(input.password);
  if (weak) details.push(detail("password", weak));
  if (details.length) {
    const fields = details.map((d) => d.field).join(", ");
    throw new ApiError(400, "invalid_request", msg("request.invalid_fields", { count: details.length, fields }), details);
  }
  return email;
}

export class UserService {
  private readonly repo: UserRepository;

  constructor(private readonly db: Db) {
    this.repo = new UserRepository(db);
  }

  /** Creates a user (a member unless `role` says otherwise); 400 for a bad email or weak password, 409 for an email already taken. */
  async create(input: { email: string; password: string; role?: Role }): Promise<User> {
    const email = checkedEmail(input);
    if (await this.findByEmail(email)) throw new ApiError(409, "email_taken", msg("auth.email_taken", { email }));
    const passwordHash = await hashPassword(input.password);
    try {
      return await this.repo.insert({ email, passwordHash, role: input.role ?? "member" });
    } catch (err) {
      // Two creations racing for one email: the unique index decides.
      if (
        String((err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code) === "23505"
      ) {
        throw new ApiError(409, "email_taken", msg("auth.email_taken", { email }));
      }
      throw err;
    }
  }

  /**
   * Self-service sign-up (POST /v1/users): creates the user unless the email already has an account, and does the
   * same work either way (the password is hashed before the insert, which the unique index turns into a no-op
   * for a taken email), so neither the answer nor its time tells a stranger which addresses have accounts.
   * Returns whether a user was created, for the log only; the caller must not let it reach the response.
   */
  async createIfFree(input: { email: string; password: string }): Promise<boolean> {
    const email = checkedEmail(input);
    const passwordHash = await hashPassword(input.password);
    return this.repo.insertIfFree({ email, passwordHash });
  }

  async findByEmail(email: string): Promise<User | undefined> {
    return this.repo.findByEmail(normaliseEmail(email));
  }

  async findById(id: string): Promise<User | undefined> {
    return this.repo.findById(id);
  }

  /**
   * The user when email and password match, else undefined; takes about as long either way. A disabled account is
   * returned with `disabled` set (only to the one who knows its password) so sign-in can say why it is refused.
   */
  async verifyCredentials(email: string, password: string): Promise<(User & { disabled: boolean }) | undefined> {
    const row = await this.repo.rowByEmail(normaliseEmail(email));
    if (!row) {
      await verifyPassword(password, await dummyPasswordHash());
      return undefined;
    }
    if (!(await verifyPassword(password, row.passwordHash))) return undefined;
    // An account being erased cannot be signed into again.
    if (row.erasingAt) return undefined;
    return { id: row.id, email: row.email, createdAt: row.createdAt, role: row.role as Role, disabled: row.disabledAt !== null };
  }

  /** True when `password` is the user's own (account erasure asks for it again). */
  async passwordMatches(userId: string, password: string): Promise<boolean> {
    const row = await this.repo.rowById(userId);
    return !!row && (await verifyPassword(password, row.passwordHash));
  }

  /**
   * Refuses (409 sole_owner_of_shared_workspace) to begin erasing the only owner of a shared workspace that others
   * still use (erasure/sole-owner.ts). Asked before beginErasure by every path that starts one; an erasure already
   * begun is not refused (the CLI run again after a kill): what began is finished.
   */
  async assertErasable(userId: string): Promise<void> {
    if ((await this.repo.rowById(userId))?.erasingAt) return;
    await refuseIfSoleOwnerOfSharedWorkspaces(this.db, userId);
  }

  /**
   * The first step of erasing an account: it is marked (so start-up resumes the erasure), signed out everywhere
   * and its API keys deleted (the table's trigger drops them from every replica's cache at once). Idempotent.
   */
  async beginErasure(userId: string): Promise<boolean> {
    const marked = await this.repo.markErasing(userId);
    await new SessionRepository(this.db).endAllOf(userId);
    await new ApiKeyRepository(this.db).deleteAllOf(userId);
    // A password-reset link for the account must not let anyone back in while it is being erased.
    await new AdminRepository(this.db).deleteLinksFor(userId);
    return marked;
  }

  /** Accounts whose erasure began and is not finished. */
  async erasing(): Promise<Array<{ id: string }>> {
    return this.repo.erasing();
  }

  /** The last step of an erasure: the row, and by cascade every row that still names the user. Only a marked one. */
  async deleteErased(userId: string): Promise<void> {
    await this.repo.deleteErased(userId);
  }

  /** Users with that email, in the CLI's terms: an unknown email is a clear error. */
  async requireByEmail(email: string): Promise<User> {
    const user = await this.findByEmail(email);
    if (!user) throw new ApiError(404, "not_found", msg("auth.no_user_with_email", { email: normaliseEmail(email) }));
    return user;
  }
}
