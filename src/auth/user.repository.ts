import { and, asc, eq, isNotNull, isNull, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { users } from "../db/schema.js";

export const ROLES = ["admin", "member"] as const;
export type Role = (typeof ROLES)[number];

export interface User {
  id: string;
  email: string;
  createdAt: Date;
  role: Role;
}

/** A user as the administrators' pages see it: its role and states. */
export interface ManagedUser {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  disabledAt: Date | null;
  erasingAt: Date | null;
}

/** The whole row, password hash included: only for checking a password. */
export type UserRow = typeof users.$inferSelect;

const userColumns = {
  id: users.id,
  email: users.email,
  createdAt: users.createdAt,
  role: sql<Role>`${users.role}`,
};

const managedColumns = {
  id: users.id,
  email: users.email,
  role: sql<Role>`${users.role}`,
  createdAt: users.createdAt,
  disabledAt: users.disabledAt,
  erasingAt: users.erasingAt,
};

/** Emails are stored lower-cased (unique index on lower(email)); `email` here is already normalised. */
const byEmail = (email: string) => sql`lower(${users.email}) = ${email}`;
const activeAdmin = and(eq(users.role, "admin"), isNull(users.disabledAt), isNull(users.erasingAt));

/**
 * The only code that touches the users table. `db` may be a transaction (the administrators' guard, an
 * invitation's account, a password reset and the first administrator are written inside one).
 */
export class UserRepository {
  constructor(private readonly db: Db) {}

  async anyExists(): Promise<boolean> {
    const [row] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(users)
      .limit(1);
    return Number(row?.n ?? 0) > 0;
  }

  async insert(values: { email: string; passwordHash: string; role: Role }): Promise<User> {
    const [row] = await this.db.insert(users).values(values).returning(userColumns);
    return row;
  }

  /** Inserts unless the email is taken (then nothing happens); true when a user was created. */
  async insertIfFree(values: { email: string; passwordHash: string }): Promise<boolean> {
    const rows = await this.db.insert(users).values(values).onConflictDoNothing().returning({ id: users.id });
    return rows.length > 0;
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const [row] = await this.db.select(userColumns).from(users).where(byEmail(email));
    return row;
  }

  async findById(id: string): Promise<User | undefined> {
    const [row] = await this.db.select(userColumns).from(users).where(eq(users.id, id));
    return row;
  }

  async rowByEmail(email: string): Promise<UserRow | undefined> {
    const [row] = await this.db.select().from(users).where(byEmail(email));
    return row;
  }

  async rowById(id: string): Promise<UserRow | undefined> {
    const [row] = await this.db.select().from(users).where(eq(users.id, id));
    return row;
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    await this.db.update(users).set({ passwordHash }).where(eq(users.id, userId));
  }

  /** Sets the password unless the account is being erased; the user, or undefined when nothing was updated. */
  async setPasswordHashUnlessErasing(userId: string, passwordHash: string): Promise<{ id: string; email: string } | undefined> {
    const [row] = await this.db
      .update(users)
      .set({ passwordHash })
      .where(and(eq(users.id, userId), isNull(users.erasingAt)))
      .returning({ id: users.id, email: users.email });
    return row;
  }

  /** Marks the account as being erased (the first mark stays); false when there is no such user. */
  async markErasing(userId: string): Promise<boolean> {
    const rows = await this.db
      .update(users)
      .set({ erasingAt: sql`coalesce(${users.erasingAt}, now())` })
      .where(eq(users.id, userId))
      .returning({ id: users.id });
    return rows.length > 0;
  }

  async erasing(): Promise<Array<{ id: string }>> {
    return this.db.select({ id: users.id }).from(users).where(isNotNull(users.erasingAt));
  }

  /** Deletes a user marked for erasure (and by cascade every row that still names it). */
  async deleteErased(userId: string): Promise<void> {
    await this.db.delete(users).where(and(eq(users.id, userId), isNotNull(users.erasingAt)));
  }

  /** Administrators who are neither disabled nor being erased, `except` one user if given. */
  async activeAdmins(except?: string): Promise<number> {
    const [{ n }] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(users)
      .where(except ? and(activeAdmin, ne(users.id, except)) : activeAdmin);
    return Number(n);
  }

  /**
   * Serialises the changes that could leave the server without an administrator (the last-administrator guard, the
   * first administrator's creation) until the end of the transaction `db` is.
   */
  async lockAdmins(): Promise<void> {
    await this.db.execute(sql`select pg_advisory_xact_lock(hashtext('builder:admins'))`);
  }

  /** Every account, oldest first (the first administrator at the top). */
  listManaged(): Promise<ManagedUser[]> {
    return this.db.select(managedColumns).from(users).orderBy(asc(users.createdAt), asc(users.id));
  }

  async findManaged(id: string): Promise<ManagedUser | undefined> {
    const [row] = await this.db.select(managedColumns).from(users).where(eq(users.id, id));
    return row;
  }

  async updateAccess(userId: string, change: { disabledAt?: Date | null; role?: Role }): Promise<ManagedUser> {
    const [row] = await this.db.update(users).set(change).where(eq(users.id, userId)).returning(managedColumns);
    return row;
  }
}
