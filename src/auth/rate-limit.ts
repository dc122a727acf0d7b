import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { Logger } from "../logger.js";

// Fixed-window counters from rate-limiter-flexible. In memory they live in this process; with Redis every
// replica shares them, and each consume is one Lua script (INCRBY + TTL), so concurrent requests can never
// both take the last slot: a limit of N admits exactly N.

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets (and, when refused, until a retry can succeed). */
  resetMs: number;
}

export interface Limiters {
  /**
   * Counts one request against `key` within a `windowSeconds` window of `points` requests. `durationSeconds`
   * gives a window that starts now its own length (a backoff period); an open window keeps its end.
   */
  consume(scope: string, key: string, points: number, windowSeconds: number, opts?: { durationSeconds?: number }): Promise<LimitDecision>;
  /** Clears a counter (a successful sign-in clears its email's failed attempts). */
  reset(scope: string, key: string, points: number, windowSeconds: number): Promise<void>;
  /** Gives one point back (a successful sign-in from an address does not count against it). */
  reward(scope: string, key: string, points: number, windowSeconds: number): Promise<void>;
  readonly store: "memory" | "redis";
  /** Resolves once Redis is connected (or after a few seconds, when the in-memory fallback takes over). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createLimiters(opts: { redisUrl?: string; keyPrefix: string; logger: Logger }): Limiters {
  const redis = opts.redisUrl
    ? // No offline queue: while Redis is down a count fails at once and the in-memory insurance limiter answers,
      // instead of every request waiting for reconnection attempts.
      new Redis(opts.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true })
    : undefined;
  redis?.on("error", (err) => opts.logger.warn({ err: err.message }, "rate-limit Redis error"));
  const cache = new Map<string, RateLimiterAbstract>();

  // One limiter object per (scope, points, window): the points live in the limiter, not in the call.
  const limiterFor = (scope: string, points: number, windowSeconds: number): RateLimiterAbstract => {
    const id = `${scope}:${points}:${windowSeconds}`;
    let limiter = cache.get(id);
    if (!limiter) {
      const keyPrefix = `${opts.keyPrefix}:${scope}`;
      const memory = new RateLimiterMemory({ points, duration: windowSeconds, keyPrefix });
      limiter = redis
        ? // If Redis is unreachable, fall back to this process's own counters rather than failing every request.
          new RateLimiterRedis({ storeClient: redis, points, duration: windowSeconds, keyPrefix, insuranceLimiter: memory })
        : memory;
      cache.set(id, limiter);
    }
    return limiter;
  };

  return {
    store: redis ? "redis" : "memory",
    async consume(scope, key, points, windowSeconds, consumeOpts) {
      try {
        const custom = consumeOpts?.durationSeconds === undefined ? undefined : { customDuration: consumeOpts.durationSeconds };
        const res = await limiterFor(scope, points, windowSeconds).consume(key, 1, custom);
        return { allowed: true, limit: points, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
      } catch (rej) {
        if (rej instanceof RateLimiterRes) return { allowed: false, limit: points, remaining: 0, resetMs: rej.msBeforeNext };
        throw rej;
      }
    },
    async reset(scope, key, points, windowSeconds) {
      await limiterFor(scope, points, windowSeconds).delete(key);
    },
    async reward(scope, key, points, windowSeconds) {
      await limiterFor(scope, points, windowSeconds).reward(key, 1);
    },
    ready: () =>
      new Promise<void>((resolve) => {
        if (!redis || redis.status === "ready") return resolve();
        const timer = setTimeout(() => {
          opts.logger.warn("Redis not ready; rate limits use this process's memory until it is");
          resolve();
        }, 3000);
        redis.once("ready", () => {
          clearTimeout(timer);
          resolve();
        });
      }),
    async close() {
      if (redis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** Header values for a decision; reset is a duration in whole seconds with an "s" suffix, like "12s". */
export function rateLimitHeaders(d: LimitDecision): Record<string, string> {
  return {
    "x-ratelimit-limit-requests": String(d.limit),
    "x-ratelimit-remaining-requests": String(d.remaining),
    "x-ratelimit-reset-requests": `${Math.max(0, Math.ceil(d.resetMs / 1000))}s`,
  };
}

export function retryAfterSeconds(d: LimitDecision): string {
  return String(Math.max(1, Math.ceil(d.resetMs / 1000)));
}
