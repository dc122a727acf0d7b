import crypto from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";
import { users } from "../db/schema.js";
import { ApiError } from "../errors.js";
import { hashPassword, safeEqual } from "./secrets.js";
import { checkedEmail } from "./user.service.js";

// The first account of a fresh install, made in the browser instead of a terminal (issue 38 item 4). Anyone who
// reaches a fresh server's page could otherwise take it, so the page asks for a setup code that only the operator
// can read: this process prints it in its log at start-up while no user exists. There is no "from the same host"
// exemption: behind the TLS proxy of docker/proxy (or any reverse proxy on the host) every request arrives from
// 127.0.0.1, so the socket address cannot tell the operator from a stranger.

/** Crockford's base32 without I, L, O, U: nothing to misread when typed from a log. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const CODE_CHARS = 16; // 80 bits: beyond guessing at any request rate, before the attempt limit even counts

export const SETUP_ATTEMPTS_PER_15_MIN = 10;

function newSetupCode(): string {
  const bytes = crypto.randomBytes(CODE_CHARS);
  const chars = [...bytes].map((b) => ALPHABET[b & 31]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join("")).join("-");
}

/** As typed: any case, with or without the dashes and spaces; O read as 0 and I/L as 1 (Crockford's rule). */
function normaliseCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

export class FirstRunSetup {
  /** One per process, made at start-up: each replica prints and accepts its own. */
  private readonly code = newSetupCode();

  constructor(private readonly db: Db) {}

  /** What `./builder serve` prints while no user exists; never sent over HTTP. */
  setupCode(): string {
    return this.code;
  }

  /**
   * Creates the first account when the setup code matches and no user exists yet, atomically: two browsers racing
   * with the right code get one account between them, and the other a 409.
   */
  async createFirstUser(input: { setupCode: string; email: string; password: string }): Promise<{ id: string; email: string }> {
    if (!safeEqual(normaliseCode(input.setupCode), normaliseCode(this.code))) {
      throw new ApiError(
        403,
        "invalid_setup_code",
        "the setup code is not the one this server printed in its log when it started; copy it from there",
        [{ field: "setup_code", message: "not this server's setup code" }],
      );
    }
    const email = checkedEmail(input);
    const passwordHash = await hashPassword(input.password);
    const created = await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('builder:first-user'))`);
      const [{ n }] = await tx.select({ n: sql<number>`count(*)::int` }).from(users);
      if (Number(n) > 0) return undefined;
      // The first account administers the others (Settings → Users).
      const [row] = await tx.insert(users).values({ email, passwordHash, role: "admin" }).returning({ id: users.id, email: users.email });
      return row;
    });
    if (!created)
      throw new ApiError(
        409,
        "setup_done",
        "this server already has a user: sign in, or ask that user (or the server's operator) for an account",
      );
    return created;
  }
}
