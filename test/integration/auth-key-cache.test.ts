import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY_CHANNEL } from "../../src/auth/index.js";
import { sha256Hex } from "../../src/auth/secrets.js";
import { bearer, createUserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Two Builder processes' worth of services (two servers) on one real Postgres, as replicas behind a load
// balancer. Each caches API-key lookups; a revocation made anywhere must reach the other one's cache at once
// through the trigger + LISTEN/NOTIFY (migration 0001), not after the 60 s TTL.

const me = (s: TestServer, key: string) => fetch(`${s.url}/v1/me`, { headers: bearer(key) }).then((r) => r.status);

async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<number> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - t0;
}

describe.skipIf(!process.env.TEST_DATABASE_URL)("API-key cache across replicas on Postgres", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let a: TestServer;
  let b: TestServer;
  let sql: pg.Client;
  beforeAll(async () => {
    db = await createThrowawayDatabase();
    const env = { DATABASE_URL: db.url, API_KEY_CACHE_TTL_S: "60" };
    a = await startTestServer("pglite", env); // "pglite": no throwaway of its own; DATABASE_URL wins
    b = await startTestServer("pglite", env);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    await until(() => a.services.auth.apiKeys.cache.enabled && b.services.auth.apiKeys.cache.enabled);
  });
  afterAll(async () => {
    await sql?.end();
    await a?.teardown();
    await b?.teardown();
    await db?.drop();
  });

  it("a key cached on replica B is refused there within moments of its revocation on replica A", async () => {
    const bob = await createUserWithKey(a);
    expect(await me(b, bob.key)).toBe(200);
    expect(b.services.auth.apiKeys.cache.get(sha256Hex(bob.key))?.id).toBe(bob.keyId); // B answers from its cache now
    await a.services.auth.apiKeys.revoke(bob.keyId);
    expect(await me(a, bob.key)).toBe(403); // the revoking process: the very next request
    const ms = await until(async () => (await me(b, bob.key)) === 403);
    expect(ms).toBeLessThan(5_000); // the TTL is 60 s: only the notification explains this
  });

  it("an operator's own SQL reaches the caches too (the trigger, not the service, announces changes)", async () => {
    const carol = await createUserWithKey(a);
    expect(await me(a, carol.key)).toBe(200);
    expect(await me(b, carol.key)).toBe(200);
    await sql.query("update api_keys set revoked_at = now() where id = $1", [carol.keyId]);
    await until(async () => (await me(a, carol.key)) === 403 && (await me(b, carol.key)) === 403);
    // last_used_at writes are not announced (they would flush the cache every minute per key).
    const dave = await createUserWithKey(a);
    expect(await me(b, dave.key)).toBe(200);
    await sql.query("update api_keys set last_used_at = now() where id = $1", [dave.keyId]);
    await new Promise((r) => setTimeout(r, 200));
    expect(b.services.auth.apiKeys.cache.get(sha256Hex(dave.key))).toBeDefined();
  });

  it("while the notification connection is down, nothing is served from the cache; it comes back by itself", async () => {
    const erin = await createUserWithKey(a);
    expect(await me(b, erin.key)).toBe(200);
    const cache = b.services.auth.apiKeys.cache;
    const dbName = new URL(db.url).pathname.slice(1);
    await sql.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query = $2`, [
      dbName,
      `LISTEN "${API_KEY_CHANNEL}"`,
    ]);
    await until(() => !cache.enabled);
    expect(cache.get(sha256Hex(erin.key))).toBeUndefined();
    // A revocation while B cannot hear it: B asks the database, so it still refuses at once.
    await sql.query("update api_keys set revoked_at = now() where id = $1", [erin.keyId]);
    expect(await me(b, erin.key)).toBe(403);
    await until(() => cache.enabled);
  });
});
