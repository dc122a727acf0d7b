import { ApiError, msg } from "../errors.js";
import { addressKey } from "./address-key.js";
import type { LimitDecision, Limiters } from "./rate-limit.js";
import { retryAfterSeconds } from "./rate-limit.js";
import type { SessionInfo, SessionService } from "./session.service.js";
import { normaliseEmail, type UserService } from "./user.service.js";

const WINDOW_S = 15 * 60;
/** The pair counter only counts; its ceiling is never reached. */
const COUNT_ONLY = 1_000_000;

export interface SignInLimits {
  /** Attempts one address may make for one email per 15 minutes before the backoff starts. */
  perPair: number;
  /** Attempts one address may make per 15 minutes, all emails together (a spray over many accounts). */
  perAddress: number;
}

/**
 * Dashboard sign-in with throttling that a stranger cannot turn against the owner. Attempts are counted per
 * address and email pair: after `perPair` in 15 minutes, each further attempt from that pair must wait twice as
 * long as the one before (2 s, 4 s, 8 s ... up to 15 minutes; refused attempts count too). The owner, signing in from their own address, is
 * never slowed by someone else's guesses (there is no per-email lock-out). One address is also capped across all
 * emails. Every attempt is counted before the password is checked, so parallel guesses cannot slip through; a
 * success clears its pair and gives its point back to the address.
 */
export async function signIn(
  deps: { users: UserService; sessions: SessionService; limiters: Limiters; limits: SignInLimits },
  input: { email: string; password: string; ip: string },
): Promise<SessionInfo & { token: string }> {
  const { users, sessions, limiters, limits } = deps;
  const email = normaliseEmail(input.email);
  const ip = addressKey(input.ip); // an IPv6 /64 is one address here
  const pair = `${ip}|${email}`;
  const address = await limiters.consume("signin-ip", ip, limits.perAddress, WINDOW_S);
  if (!address.allowed) throw tooMany(address);
  const counted = await limiters.consume("signin-pair", pair, COUNT_ONLY, WINDOW_S);
  const attempt = COUNT_ONLY - counted.remaining;
  if (attempt > limits.perPair) {
    // The gate holds one attempt per backoff period; the first past it opens the next, longer period.
    const waitS = Math.min(WINDOW_S, 2 ** (attempt - limits.perPair));
    const gate = await limiters.consume("signin-backoff", pair, 1, WINDOW_S, { durationSeconds: waitS });
    if (!gate.allowed) throw tooMany(gate);
  }
  const user = await users.verifyCredentials(email, input.password);
  if (!user) throw new ApiError(401, "invalid_credentials", msg("auth.invalid_credentials"));
  // Said only to whoever knows the password: the owner learns why, a guesser learns nothing new.
  if (user.disabled) throw new ApiError(403, "account_disabled", msg("auth.account_disabled"));
  await limiters.reset("signin-pair", pair, COUNT_ONLY, WINDOW_S);
  await limiters.reset("signin-backoff", pair, 1, WINDOW_S);
  await limiters.reward("signin-ip", ip, limits.perAddress, WINDOW_S);
  return sessions.create(user);
}

function tooMany(decision: LimitDecision): ApiError {
  return new ApiError(429, "rate_limit_exceeded", msg("auth.signin_attempts", { seconds: retryAfterSeconds(decision) }), undefined, {
    "retry-after": retryAfterSeconds(decision),
  });
}
