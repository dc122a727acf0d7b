import crypto from "node:crypto";
import type { Db } from "../db/client.js";
import { ApiError, msg, detail } from "../errors.js";
import { hashPassword, safeEqual } from "./secrets.js";
import { checkedEmail } from "./user.service.js";
import { UserRepository } from "./user.repository.js";

// The first account of a fresh install, made in the browser instead of a terminal (issue 38 item 4). Anyone who
// reaches a fresh server's page could otherwise take it, so the page asks for a setup code that only the operator
// can read: this process prints it in its terminal while no administrator exists (FirstRunSetup says when). There is no "from the same host"
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

/** A setup code while it can be used: made when no administrator exists, spent when one does. */
interface IssuedCode {
  value: string;
  issuedAt: number;
}

export interface FirstRunOptions {
  /** How long a printed code works (SETUP_CODE_TTL_HOURS); after that a restart prints a new one. */
  ttlMs: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/**
 * The setup code's life (issue 48 finding 11): a code exists only while the server has no active administrator.
 * `ensureCode` makes one when there is none and hands it to whoever listens (`./builder serve` prints it); it is
 * spent the moment an administrator exists, however that administrator came about (this page, the CLI), and
 * never comes back: when the last administrator is later erased, the next `ensureCode` (start-up, the sign-in
 * page asking GET /v1/setup, the end of an erasure) makes and prints a new one. A code also stops working
 * `ttlMs` after it was made: one that sat in a terminal's scrollback or a shipped log for days opens nothing.
 */
export class FirstRunSetup {
  /** One per process: each replica prints and accepts its own. */
  private code: IssuedCode | undefined;
  private announced: IssuedCode | undefined;
  private listener: ((code: string, expiresAt: Date) => void) | undefined;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly opts: FirstRunOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** True while an administrator who can manage users exists (not disabled, not being erased). */
  async adminExists(): Promise<boolean> {
    return (await new UserRepository(this.db).activeAdmins()) > 0;
  }

  /**
   * Makes a code when no administrator exists and none is held (or the held one has expired and `renewExpired`),
   * and announces it; drops the held code once an administrator exists. Returns whether a code is usable now.
   */
  async ensureCode(): Promise<boolean> {
    if (await this.adminExists()) {
      this.code = undefined; // spent: this one never works again, even if no administrator is left later
      return false;
    }
    // Checked again after the await: two callers at once make one code between them.
    if (!this.code) this.code = { value: newSetupCode(), issuedAt: this.now() };
    this.announce();
    return !this.expired(this.code);
  }

  /** `./builder serve` prints each new code in its terminal (never in the JSON log, which is often shipped elsewhere). */
  onNewCode(listener: (code: string, expiresAt: Date) => void): void {
    this.listener = listener;
    this.announce();
  }

  /** The code held now, if any (tests read it as an operator reads the terminal); never sent over HTTP. */
  setupCode(): string | undefined {
    return this.code?.value;
  }

  private announce(): void {
    if (!this.listener || !this.code || this.announced === this.code) return;
    this.announced = this.code;
    this.listener(this.code.value, new Date(this.code.issuedAt + this.opts.ttlMs));
  }

  private expired(code: IssuedCode): boolean {
    return this.now() >= code.issuedAt + this.opts.ttlMs;
  }

  /**
   * Creates an administrator when the setup code matches and no active administrator exists, atomically: two
   * browsers racing with the right code get one account between them, and the other a 409. On a fresh server this
   * is the first account; after the last administrator was erased, the account that administers the others again.
   */
  async createFirstUser(input: { setupCode: string; email: string; password: string }): Promise<{ id: string; email: string }> {
    if (!(await this.ensureCode())) {
      if (!this.code) throw setupDone();
      throw new ApiError(403, "setup_code_expired", msg("auth.setup_code_expired", { hours: Math.round(this.opts.ttlMs / 3_600_000) }), [
        detail("setup_code", msg("detail.expired")),
      ]);
    }
    const code = this.code!;
    if (!safeEqual(normaliseCode(input.setupCode), normaliseCode(code.value))) {
      throw new ApiError(403, "invalid_setup_code", msg("auth.invalid_setup_code"), [detail("setup_code", msg("detail.not_setup_code"))]);
    }
    const email = checkedEmail(input);
    const passwordHash = await hashPassword(input.password);
    const created = await this.db.transaction(async (tx) => {
      // The same lock as the last-administrator guard (AdminRepository.changeAccess) and the first-user race.
      const users = new UserRepository(tx);
      await users.lockAdmins();
      if ((await users.activeAdmins()) > 0) return undefined;
      if (await users.findByEmail(email)) return "taken" as const;
      // This account administers the others (Settings → Users).
      const row = await users.insert({ email, passwordHash, role: "admin" });
      return { id: row.id, email: row.email };
    });
    if (created === "taken") throw new ApiError(409, "email_taken", msg("auth.setup_email_taken", { email }));
    // Spent either way: an administrator exists now.
    if (this.code === code) this.code = undefined;
    if (!created) throw setupDone();
    return created;
  }
}

function setupDone(): ApiError {
  return new ApiError(409, "setup_done", msg("auth.setup_done"));
}
