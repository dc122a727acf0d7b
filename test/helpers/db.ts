import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe } from "vitest";

export type DbTarget = "pglite" | "postgres";

/** PGlite always; the real Postgres too when TEST_DATABASE_URL is set (.ci/run sets it). */
export function dbTargets(): DbTarget[] {
  return process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
}

/**
 * describe.each over both targets, where a target this run cannot reach is registered as skipped (and says why)
 * instead of dropped: the summary's skipped count shows that the Postgres half did not run.
 */
export function describeEachTarget(name: string, body: (target: DbTarget) => void): void {
  for (const target of ["pglite", "postgres"] as const) {
    const missing = !dbTargets().includes(target);
    describe.skipIf(missing)(`${name.replace("%s", target)}${missing ? " (skipped: TEST_DATABASE_URL is not set)" : ""}`, () =>
      body(target),
    );
  }
}

/** The one target for slow end-to-end tests: Postgres when available, else PGlite. */
export function primaryTarget(): DbTarget {
  return process.env.TEST_DATABASE_URL ? "postgres" : "pglite";
}

/** A throwaway database on the test server, dropped by the returned function. */
export async function createThrowawayDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error("TEST_DATABASE_URL is not set");
  const name = `builder_test_${Date.now()}_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
