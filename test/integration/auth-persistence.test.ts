import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { sha256Hex } from "../../src/auth/secrets.js";
import { parseConfig } from "../../src/config.js";
import { apiKeys, sessions, users } from "../../src/db/schema.js";
import { startServer, type RunningServer } from "../../src/server.js";
import { bearer } from "../helpers/auth.js";
import { createThrowawayDatabase, describeEachTarget } from "../helpers/db.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

/** Every file under dir whose bytes contain needle (the PGlite folder is binary pages, WAL included). */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const want = Buffer.from(needle);
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.readFileSync(file).includes(want)) hits.push(file);
  }
  return hits;
}

describeEachTarget("users and keys across a restart on %s", (target) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-restart-"));
  let drop: (() => Promise<void>) | undefined;
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("keeps users and keys, keeps revocations, and never stores a key or session token in clear", async () => {
    let env: Record<string, string> = { NODE_ENV: "test", LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir };
    if (target === "postgres") {
      const db = await createThrowawayDatabase();
      drop = db.drop;
      env = { ...env, DATABASE_URL: db.url };
    }
    const config = parseConfig(env);

    server = await startServer(config, { port: 0, host: "127.0.0.1" });
    const { auth } = server.services;
    const user = await auth.users.create({ email: "Restart@Test.Example", password: "a long enough password" });
    const kept = await auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "kept", rateLimitPerMinute: 7 });
    const revoked = await auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "revoked" });
    await auth.apiKeys.revoke(revoked.info.id);
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(kept.key) })).status).toBe(200);
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "restart@test.example", password: "a long enough password" }),
    });
    const sessionToken = (signIn.headers.get("set-cookie") ?? "").split(";")[0].split("=")[1];
    expect(sessionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // The tables hold hashes only: the key's SHA-256 is there, the key (and the session token) is not.
    const dump = JSON.stringify({
      users: await server.services.db.select().from(users),
      keys: await server.services.db.select().from(apiKeys),
      sessions: await server.services.db.select().from(sessions),
    });
    expect(dump).toContain(sha256Hex(kept.key));
    expect(dump).toContain(sha256Hex(sessionToken));
    for (const secret of [kept.key, revoked.key, sessionToken, "a long enough password"]) expect(dump).not.toContain(secret);
    await server.stop();
    server = undefined;

    // Nothing in the data folder (PGlite pages and WAL, bucket, logs) holds a secret either.
    if (target === "pglite") expect(filesContaining(dataDir, sha256Hex(kept.key)).length).toBeGreaterThan(0);
    for (const secret of [kept.key, revoked.key, sessionToken]) expect(filesContaining(dataDir, secret)).toEqual([]);

    server = await startServer(config, { port: 0, host: "127.0.0.1" });
    const me = await fetch(`${server.url}/v1/me`, { headers: bearer(kept.key) });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ user_id: user.id, email: "restart@test.example", role: "member" });
    expect(me.headers.get("x-ratelimit-limit-requests")).toBe("7");
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(revoked.key) })).status).toBe(403);
    const session = await fetch(`${server.url}/v1/session`, { headers: { cookie: `builder_session=${sessionToken}` } });
    expect(session.status).toBe(200);
  }, 180_000);
});
