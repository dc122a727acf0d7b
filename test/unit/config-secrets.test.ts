import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";

// .env.example's secrets are placeholders; a deployment that copies the file and forgets to edit one must not
// start (issue 42, finding 12b). The refusal names the variable and never prints the secret it was given.

const EXAMPLE = fs.readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
/** NAME=value lines of .env.example, commented ones included (# NAME=value): what an operator may uncomment. */
const exampleValues = new Map([...EXAMPLE.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
const SECRETS = ["POSTGRES_PASSWORD", "REDIS_PASSWORD", "METRICS_TOKEN", "CALLBACK_SECRET"];

function problems(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

describe("configuration: .env.example's placeholders are refused", () => {
  it(".env.example carries a placeholder for every secret compose.yaml needs", () => {
    for (const name of SECRETS) expect(exampleValues.get(name), name).toMatch(/^change-me/);
  });

  for (const name of SECRETS) {
    it(`${name} with the example's value: start-up refused, naming the variable, not echoing the value`, () => {
      const value = exampleValues.get(name)!;
      const found = problems({ [name]: value });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(new RegExp(`^${name}: .*placeholder`));
      expect(found.join("\n")).not.toContain(value);
    });
  }

  it("DATABASE_URL and REDIS_URL carrying the example passwords (as compose.yaml builds them) are refused", () => {
    const pg = encodeURIComponent(exampleValues.get("POSTGRES_PASSWORD")!);
    const redis = encodeURIComponent(exampleValues.get("REDIS_PASSWORD")!);
    const found = problems({ DATABASE_URL: `postgres://builder:${pg}@postgres:5432/builder`, REDIS_URL: `redis://:${redis}@redis:6379` });
    expect(found.map((p) => p.split(":")[0]).sort()).toEqual(["DATABASE_URL", "REDIS_URL"]);
    expect(found.join("\n")).not.toContain(pg);
  });

  it("listed with every other bad variable at once, not after them", () => {
    const found = problems({
      PORT: "http",
      POSTGRES_PASSWORD: exampleValues.get("POSTGRES_PASSWORD")!,
      REDIS_PASSWORD: exampleValues.get("REDIS_PASSWORD")!,
    });
    expect(found.map((p) => p.split(":")[0]).sort()).toEqual(["PORT", "POSTGRES_PASSWORD", "REDIS_PASSWORD"]);
  });

  it("real secrets start; a URL without a password is not a placeholder", () => {
    const cfg = parseConfig({
      POSTGRES_PASSWORD: "9f2c4e1a7b3d5f60a8c2e4b6d8f0a1c3",
      REDIS_PASSWORD: "0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e",
      METRICS_TOKEN: "5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b",
      DATABASE_URL: "postgres://builder:9f2c4e1a7b3d5f60a8c2e4b6d8f0a1c3@postgres:5432/builder",
      REDIS_URL: "redis://127.0.0.1:6379",
    });
    expect(cfg.METRICS_TOKEN).toBe("5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b");
  });

  it("other secrets' errors do not echo them either (a too-short CALLBACK_SECRET)", () => {
    const found = problems({ CALLBACK_SECRET: "short-secret" });
    expect(found[0]).toMatch(/^CALLBACK_SECRET: /);
    expect(found[0]).not.toContain("short-secret");
    // Non-secrets still show what was given: it helps and harms no one.
    expect(problems({ PORT: "http" })[0]).toContain('"http"');
  });
});

describe("configuration: TRUST_PROXY", () => {
  it("defaults to loopback and takes the names and ranges Express knows", () => {
    expect(parseConfig({}).TRUST_PROXY).toBe("loopback");
    expect(parseConfig({ TRUST_PROXY: "loopback, uniquelocal" }).TRUST_PROXY).toBe("loopback, uniquelocal");
    expect(parseConfig({ TRUST_PROXY: "10.0.0.0/8,192.168.1.7" }).TRUST_PROXY).toBe("10.0.0.0/8,192.168.1.7");
  });

  it("refuses what Express would throw on at start-up, or read as 'trust everyone'", () => {
    for (const bad of ["true", "everyone", "10.0.0.0/8, proxy.example"])
      expect(problems({ TRUST_PROXY: bad })[0], bad).toMatch(/^TRUST_PROXY: /);
  });
});
