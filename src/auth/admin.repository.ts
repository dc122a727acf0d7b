import { and, desc, eq, gt, isNull } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { accountLinks } from "../db/schema.js";
import { SessionRepository } from "./session.repository.js";
import { UserRepository, type ManagedUser, type Role } from "./user.repository.js";
import { isRole } from "../workspaces/permissions.js";
import { WorkspaceMemberRepository } from "../workspaces/workspace.repository.js";

export type { ManagedUser } from "./user.repository.js";

export type LinkKind = "invitation" | "password_reset";

export type AccountLink = typeof accountLinks.$inferSelect;

/** Why a link cannot be used, when it cannot. */
export type LinkState = "usable" | "unknown" | "used" | "revoked" | "expired";

/**
 * The only code that touches the account_links table (invitations and password-reset links), and the
 * administrators' changes that must be made in one transaction with users and sessions (through their repositories).
 */
export class AdminRepository {
  private readonly users: UserRepository;

  constructor(private readonly db: Db) {
    this.users = new UserRepository(db);
  }

  /** Every account, oldest first (the first administrator at the top). */
  listUsers(): Promise<ManagedUser[]> {
    return this.users.listManaged();
  }

  findUser(id: string): Promise<ManagedUser | undefined> {
    return this.users.findManaged(id);
  }

  /**
   * Applies `change` to one user unless, afterwards, no active administrator would be left (that guard is checked
   * and the change made under one lock, so two administrators disabling each other at once cannot both succeed).
   * Disabling also ends the user's sessions and withdraws the links they made. Returns the user after the change, "last_admin" when refused, undefined when there is no such user.
   */
  async changeAccess(userId: string, change: { disabledAt?: Date | null; role?: Role }): Promise<ManagedUser | "last_admin" | undefined> {
    return this.db.transaction(async (tx) => {
      const users = new UserRepository(tx);
      await users.lockAdmins();
      const before = await users.findManaged(userId);
      if (!before) return undefined;
      const staysActiveAdmin =
        (change.role ?? before.role) === "admin" &&
        (change.disabledAt === undefined ? before.disabledAt === null : change.disabledAt === null);
      const isActiveAdmin = before.role === "admin" && before.disabledAt === null && before.erasingAt === null;
      if (isActiveAdmin && !staysActiveAdmin) {
        if ((await users.activeAdmins(userId)) === 0) return "last_admin" as const;
      }
      const after = await users.updateAccess(userId, change);
      if (change.disabledAt) {
        // A disabled account is signed out everywhere in the same step, and the links it handed out as an
        // administrator are withdrawn: an account disabled because it was misused must not leave a way back in
        // (an administrator's invitation). The other administrators see what is pending and can invite again.
        await new SessionRepository(tx).endAllOf(userId);
        await tx
          .update(accountLinks)
          .set({ revokedAt: new Date() })
          .where(and(eq(accountLinks.createdBy, userId), isNull(accountLinks.usedAt), isNull(accountLinks.revokedAt)));
      }
      return after;
    });
  }

  /** Active administrators other than `userId` (the last one may not leave them without any). */
  async otherActiveAdmins(userId: string): Promise<number> {
    return this.users.activeAdmins(userId);
  }

  async insertLink(values: typeof accountLinks.$inferInsert): Promise<AccountLink> {
    const [row] = await this.db.insert(accountLinks).values(values).returning();
    return row;
  }

  async findLink(kind: LinkKind, tokenHash: string): Promise<AccountLink | undefined> {
    const [row] = await this.db
      .select()
      .from(accountLinks)
      .where(and(eq(accountLinks.kind, kind), eq(accountLinks.tokenHash, tokenHash)));
    return row;
  }

  /** Invitations not used, revoked or expired; newest first. */
  pendingInvitations(now = new Date()): Promise<AccountLink[]> {
    return this.db
      .select()
      .from(accountLinks)
      .where(
        and(
          eq(accountLinks.kind, "invitation"),
          isNull(accountLinks.usedAt),
          isNull(accountLinks.revokedAt),
          gt(accountLinks.expiresAt, now),
        ),
      )
      .orderBy(desc(accountLinks.createdAt));
  }

  /** Revokes a link that is still pending; undefined when it does not exist or can no longer be used. */
  async revokeLink(kind: LinkKind, id: string): Promise<AccountLink | undefined> {
    const [row] = await this.db
      .update(accountLinks)
      .set({ revokedAt: new Date() })
      .where(and(eq(accountLinks.id, id), eq(accountLinks.kind, kind), isNull(accountLinks.usedAt), isNull(accountLinks.revokedAt)))
      .returning();
    return row;
  }

  /** A new reset link replaces the user's earlier ones: only the newest link handed over works. */
  async revokePendingResets(userId: string): Promise<void> {
    await this.db
      .update(accountLinks)
      .set({ revokedAt: new Date() })
      .where(
        and(
          eq(accountLinks.kind, "password_reset"),
          eq(accountLinks.userId, userId),
          isNull(accountLinks.usedAt),
          isNull(accountLinks.revokedAt),
        ),
      );
  }

  /** An account being erased: its links go (a reset link must not let anyone back in while it is erased). */
  async deleteLinksFor(userId: string): Promise<void> {
    await this.db.delete(accountLinks).where(eq(accountLinks.userId, userId));
  }

  /** A workspace being deleted: its pending invitations would otherwise make new members of it. */
  async deleteWorkspaceInvitations(workspaceId: string): Promise<void> {
    await this.db.delete(accountLinks).where(and(eq(accountLinks.workspaceId, workspaceId), isNull(accountLinks.usedAt)));
  }

  /** Creates the invited account and uses the invitation, in one transaction. */
  async acceptInvitation(tokenHash: string, account: { email: string; passwordHash: string }): Promise<AcceptOutcome> {
    try {
      return await this.useLink("invitation", tokenHash, async (tx, link) => {
        const user = await new UserRepository(tx).insert({
          email: account.email,
          passwordHash: account.passwordHash,
          role: link.role as Role,
        });
        // An invitation into a workspace (issue 50): the membership is made with the account, in its transaction.
        if (link.workspaceId && isRole(link.workspaceRole)) {
          await new WorkspaceMemberRepository(tx).add(link.workspaceId, user.id, link.workspaceRole);
        }
        return { result: { id: user.id, email: user.email, role: user.role }, usedBy: user.id };
      });
    } catch (err) {
      // The unique index on lower(email) refused it; the rollback left the invitation as it was.
      if (isUniqueViolation(err)) return { ok: "email_taken" };
      throw err;
    }
  }

  /**
   * Sets the password a reset link is for and uses the link, in one transaction; ends the user's sessions in it too.
   * Returns the user, or undefined inside ok when the account is being erased (the link is then spent).
   */
  async useReset(tokenHash: string, passwordHash: string) {
    return this.useLink("password_reset", tokenHash, async (tx, link) => {
      const row = await new UserRepository(tx).setPasswordHashUnlessErasing(link.userId!, passwordHash);
      if (row) await new SessionRepository(tx).endAllOf(row.id);
      // Undefined when the account is being erased (no row updated): the link is spent all the same.
      const result: { id: string; email: string } | undefined = row;
      return { result };
    });
  }

  /**
   * Uses a link once, atomically with `act` (which creates the account or sets the password): the link is claimed
   * with a conditional UPDATE (a second use, even at the same instant, finds it claimed), and if `act` fails the
   * transaction rolls the claim back, so a failed sign-up (an email already taken) leaves the invitation usable.
   * Returns what `act` returned, or why the link cannot be used.
   */
  private async useLink<T>(
    kind: LinkKind,
    tokenHash: string,
    act: (tx: Db, link: AccountLink) => Promise<{ result: T; usedBy?: string }>,
  ): Promise<{ ok: T } | { refused: Exclude<LinkState, "usable"> }> {
    const outcome = await this.db.transaction(async (tx) => {
      const [claimed] = await tx
        .update(accountLinks)
        .set({ usedAt: new Date() })
        .where(
          and(
            eq(accountLinks.kind, kind),
            eq(accountLinks.tokenHash, tokenHash),
            isNull(accountLinks.usedAt),
            isNull(accountLinks.revokedAt),
            gt(accountLinks.expiresAt, new Date()),
          ),
        )
        .returning();
      if (!claimed) return undefined;
      const { result, usedBy } = await act(tx, claimed);
      if (usedBy) await tx.update(accountLinks).set({ usedBy }).where(eq(accountLinks.id, claimed.id));
      return { ok: result };
    });
    if (outcome) return outcome;
    return { refused: linkState(await this.findLink(kind, tokenHash)) as Exclude<LinkState, "usable"> };
  }
}

/** The account an invitation made, or "email_taken" (the invitation is then left unused). */
export type AcceptOutcome = { ok: { id: string; email: string; role: Role } | "email_taken" } | { refused: Exclude<LinkState, "usable"> };

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return String(e.code ?? e.cause?.code) === "23505";
}

export function linkState(link: AccountLink | undefined, now = new Date()): LinkState {
  if (!link) return "unknown";
  if (link.usedAt) return "used";
  if (link.revokedAt) return "revoked";
  if (link.expiresAt <= now) return "expired";
  return "usable";
}
