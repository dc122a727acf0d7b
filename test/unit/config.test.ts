import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";

describe("configuration", () => {
  it("has working defaults with an empty environment", () => {
    const cfg = parseConfig({});
    expect(cfg.PORT).toBe(8080);
    expect(cfg.BUILDER_DATA_DIR).toBe("./data");
    expect(cfg.DATABASE_URL).toBeUndefined();
  });

  it("lists every bad variable at once", () => {
    try {
      parseConfig({ PORT: "http", RATE_LIMIT_PER_MINUTE: "0", DATABASE_URL: "not a url" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join("\n");
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/RATE_LIMIT_PER_MINUTE/);
      expect(problems).toMatch(/DATABASE_URL/);
    }
  });

  it("treats empty strings as unset", () => {
    expect(parseConfig({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });
});
