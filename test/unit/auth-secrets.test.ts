import { describe, expect, it } from "vitest";
import { say } from "../../src/errors.js";
import { createAuth } from "../../src/auth/index.js";
import { createLimiters, rateLimitHeaders, retryAfterSeconds } from "../../src/auth/rate-limit.js";
import { base62, generateApiKey, hashPassword, looksLikeApiKey, sha256Hex, verifyPassword } from "../../src/auth/secrets.js";
import { readCookie } from "../../src/auth/session.service.js";
import { passwordProblem } from "../../src/auth/user.service.js";
import { parseConfig } from "../../src/config.js";
import type { Db } from "../../src/db/client.js";
import { createLogger } from "../../src/logger.js";

describe("API keys", () => {
  it("are bld_ + 43 base62 characters, all different", () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(looksLikeApiKey(k)).toBe(true);
  });

  it("encode 32 bytes in fixed-width base62, zeros included", () => {
    expect(base62(Buffer.alloc(32))).toBe("0".repeat(43));
    expect(base62(Buffer.alloc(32, 0xff))).toHaveLength(43);
    expect(base62(Buffer.from([61]))).toBe("0z");
  });

  it("hash to SHA-256 hex", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("passwords", () => {
  it("hash with scrypt N>=2^15 and a per-user salt, and verify", async () => {
    const a = await hashPassword("correct horse battery");
    const b = await hashPassword("correct horse battery");
    expect(a).not.toBe(b); // different salts
    const [algo, N] = a.split("$");
    expect(algo).toBe("scrypt");
    expect(Number(N)).toBeGreaterThanOrEqual(2 ** 15);
    expect(await verifyPassword("correct horse battery", a)).toBe(true);
    expect(await verifyPassword("correct horse batterY", a)).toBe(false);
    expect(await verifyPassword("x", "garbage")).toBe(false);
  });

  it("must be at least 12 characters", () => {
    expect(say(passwordProblem("elevenchars")!, "en")).toMatch(/12/);
    expect(say(passwordProblem("elevenchars")!, "es")).toMatch(/al menos 12 caracteres/);
    expect(passwordProblem("twelve chars")).toBeUndefined();
  });
});

describe("rate-limit headers", () => {
  it("give the limit, what remains and the reset as whole seconds with an s suffix", () => {
    expect(rateLimitHeaders({ allowed: true, limit: 10, remaining: 3, resetMs: 11_200 })).toEqual({
      "x-ratelimit-limit-requests": "10",
      "x-ratelimit-remaining-requests": "3",
      "x-ratelimit-reset-requests": "12s",
    });
    expect(retryAfterSeconds({ allowed: false, limit: 1, remaining: 0, resetMs: 10 })).toBe("1");
  });
});

describe("cookies", () => {
  it("reads one cookie out of a header", () => {
    expect(readCookie("a=1; builder_session=tok%2Fen; b=2", "builder_session")).toBe("tok/en");
    expect(readCookie("a=1", "builder_session")).toBeUndefined();
    expect(readCookie(undefined, "builder_session")).toBeUndefined();
  });

  it("are Secure when COOKIE_SECURE says so, by default in production only", async () => {
    const secure = async (env: Record<string, string>) => {
      const auth = await createAuth({ config: parseConfig(env), db: {} as Db, logger: createLogger("silent") });
      const opts = auth.cookieOptions();
      await auth.close();
      expect(opts).toMatchObject({ httpOnly: true, sameSite: "lax", path: "/" });
      return opts.secure;
    };
    expect(await secure({ NODE_ENV: "test" })).toBe(false);
    expect(await secure({ NODE_ENV: "production" })).toBe(true);
    expect(await secure({ NODE_ENV: "production", COOKIE_SECURE: "false" })).toBe(false);
    expect(await secure({ NODE_ENV: "development", COOKIE_SECURE: "true" })).toBe(true);
  });
});

describe("rate limiter with Redis down", () => {
  it("falls back to this process's counters at once instead of failing or stalling requests", async () => {
    const limiters = createLimiters({ redisUrl: "redis://127.0.0.1:1", keyPrefix: "unit", logger: createLogger("silent") });
    try {
      await limiters.ready();
      const started = Date.now();
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await limiters.consume("key", "k", 3, 60));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await limiters.close();
    }
  }, 15_000);
});
