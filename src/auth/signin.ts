import { ApiError } from "../errors.js";
import type { Limiters } from "./rate-limit.js";
import { retryAfterSeconds } from "./rate-limit.js";
import type { SessionInfo, SessionService } from "./session.service.js";
import { normaliseEmail, type UserService } from "./user.service.js";

const WINDOW_S = 15 * 60;

/**
 * Dashboard sign-in with throttling: at most `attempts` tries per 15 minutes per email and per client
 * address. Every attempt is counted before the password is checked (so parallel guesses cannot slip
 * through); a success clears the email's counter and gives its point back to the address.
 */
export async function signIn(
  deps: { users: UserService; sessions: SessionService; limiters: Limiters; attempts: number },
  input: { email: string; password: string; ip: string },
): Promise<SessionInfo & { token: string }> {
  const { users, sessions, limiters, attempts } = deps;
  const email = normaliseEmail(input.email);
  for (const [scope, key] of [["signin-email", email], ["signin-ip", input.ip]] as const) {
    const decision = await limiters.consume(scope, key, attempts, WINDOW_S);
    if (!decision.allowed) {
      throw new ApiError(429, "rate_limit_exceeded", `too many sign-in attempts; try again in ${retryAfterSeconds(decision)} s`, undefined, {
        "retry-after": retryAfterSeconds(decision),
      });
    }
  }
  const user = await users.verifyCredentials(email, input.password);
  if (!user) throw new ApiError(401, "invalid_credentials", "the email or the password is wrong");
  await limiters.reset("signin-email", email, attempts, WINDOW_S);
  await limiters.reward("signin-ip", input.ip, attempts, WINDOW_S);
  return sessions.create(user);
}
