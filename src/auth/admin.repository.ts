import { and, asc, desc, eq, gt, isNull, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { accountLinks, sessions, users } from "../db/schema.js";
import type { Role } from "./user.service.js";

export type LinkKind = "invitation" | "password_reset";

export interface ManagedUser {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  disabledAt: Date | null;
  erasingAt: Date | null;
}

export type AccountLink = typeof accountLinks.$inferSelect;

/** Why a link cannot be used, when it cannot. */
export type LinkState = "usable" | "unknown" | "used" | "revoked" | "expired";

const managedColumns = {
  id: users.id,
  email: users.email,
  role: sql<Role>`${users.role}`,
  createdAt: users.createdAt,
  disabledAt: users.disabledAt,
  erasingAt: users.erasingAt,
};

/** Everything the administrators' operations read and write in the database (users' roles and states, account links). */
export class AdminRepository {
  constructor(private readonly db: Db) {}

  /** Every account, oldest first (the first administrator at the top). */
  listUsers(): Promise<ManagedUser[]> {
    return this.db.select(managedColumns).from(users).orderBy(asc(users.createdAt), asc(users.id));
  }

  async findUser(id: string): Promise<ManagedUser | undefined> {
    const [row] = await this.db.select(managedColumns).from(users).where(eq(users.id, id));
    return row;
  }

  /**
   * Applies `change` to one user unless, afterwards, no active administrator would be left (that guard is checked
   * and the change made under one lock, so two administrators disabling each other at once cannot both succeed).
   * Disabling also ends the user's sessions and withdraws the links they made. Returns the user after the change, "last_admin" when refused, undefined when there is no such user.
   */
  async changeAccess(userId: string, change: { disabledAt?: Date | null; role?: Role }): Promise<ManagedUser | "last_admin" | undefined> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('builder:admins'))`);
      const [before] = await tx.select(managedColumns).from(users).where(eq(users.id, userId));
      if (!before) return undefined;
      const staysActiveAdmin =
        (change.role ?? before.role) === "admin" &&
        (change.disabledAt === undefined ? before.disabledAt === null : change.disabledAt === null);
      const isActiveAdmin = before.role === "admin" && before.disabledAt === null && before.erasingAt === null;
      if (isActiveAdmin && !staysActiveAdmin) {
        const [{ n }] = await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(users)
          .where(and(eq(users.role, "admin"), isNull(users.disabledAt), isNull(users.erasingAt), ne(users.id, userId)));
        if (Number(n) === 0) return "last_admin" as const;
      }
      const [after] = await tx.update(users).set(change).where(eq(users.id, userId)).returning(managedColumns);
      if (change.disabledAt) {
        // A disabled account is signed out everywhere in the same step, and the links it handed out as an
        // administrator are withdrawn: an account disabled because it was misused must not leave a way back in
        // (an administrator's invitation). The other administrators see what is pending and can invite again.
        await tx.delete(sessions).where(eq(sessions.userId, userId));
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
    const [{ n }] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(users)
      .where(and(eq(users.role, "admin"), isNull(users.disabledAt), isNull(users.erasingAt), ne(users.id, userId)));
    return Number(n);
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

  /** Creates the invited account and uses the invitation, in one transaction. */
  async acceptInvitation(tokenHash: string, account: { email: string; passwordHash: string }): Promise<AcceptOutcome> {
    try {
      return await this.useLink("invitation", tokenHash, async (tx, link) => {
        const [row] = await tx
          .insert(users)
          .values({ email: account.email, passwordHash: account.passwordHash, role: link.role })
          .returning({ id: users.id, email: users.email, role: sql<Role>`${users.role}` });
        return { result: row, usedBy: row.id };
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
      const [row] = await tx
        .update(users)
        .set({ passwordHash })
        .where(and(eq(users.id, link.userId!), isNull(users.erasingAt)))
        .returning({ id: users.id, email: users.email });
      if (row) await tx.delete(sessions).where(eq(sessions.userId, row.id));
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
