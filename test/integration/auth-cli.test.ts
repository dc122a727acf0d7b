import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { startServer } from "../../src/server.js";
import { bearer } from "../helpers/auth.js";
import { personal } from "../helpers/auth.js";

const run = promisify(execFile);
const BUILDER = path.resolve(import.meta.dirname, "../../builder");

/** Runs the real ./builder launcher; never throws, so tests can look at failures. */
async function builder(env: Record<string, string>, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(BUILDER, args, {
      env: { PATH: process.env.PATH!, HOME: os.tmpdir(), LOG_LEVEL: "silent", ...env },
      timeout: 240_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}
const lastLine = (s: string) => s.trimEnd().split("\n").at(-1) ?? "";

// BUILDER_DATA_DIR (PGlite) only: the CLI shares openDatabase with the server, whose Postgres path the other
// integration tests cover, and each ./builder start costs seconds.
describe("./builder users and keys (PGlite in BUILDER_DATA_DIR)", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-cli-"));
  const env: Record<string, string> = { BUILDER_DATA_DIR: dataDir };
  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("creates users and keys directly and through a running server, lists and revokes them, with clear errors", async () => {
    // No server yet: the CLI opens (and migrates) the PGlite folder itself.
    const created = await builder(env, "users", "create", "--email", "cli@test.example", "--password", "twelve chars ok");
    expect(created.code, created.stderr).toBe(0);
    const userId = lastLine(created.stdout);
    expect(userId).toMatch(/^[0-9a-f-]{36}$/);
    const weak = await builder(env, "users", "create", "--email", "weak@test.example", "--password", "short");
    expect(weak.code).not.toBe(0);
    expect(weak.stderr).toMatch(/at least 12 characters/);

    // A server on the same folder owns PGlite now; the CLI goes through its admin socket, and the server
    // sees the new key at once.
    const server = await startServer(parseConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", ...env }), { port: 0, host: "127.0.0.1" });
    let keyId: string | undefined;
    let secret = "";
    try {
      expect(fs.statSync(path.join(dataDir, "admin.sock")).mode & 0o777).toBe(0o600);
      const dup = await builder(env, "users", "create", "--email", "CLI@test.example", "--password", "twelve chars ok");
      expect(dup.code).not.toBe(0);
      expect(dup.stderr).toMatch(/already exists/);

      const key = await builder(
        env,
        "keys",
        "create",
        "--email",
        "cli@test.example",
        "--name",
        "ci",
        "--rate-limit",
        "5",
        "--scopes",
        "read",
      );
      expect(key.code, key.stderr).toBe(0);
      expect(key.stderr).toContain("(scopes read)");
      secret = lastLine(key.stdout);
      expect(secret).toMatch(/^bld_[0-9A-Za-z]{43}$/);
      // The secret appears once: as the last line of stdout, nowhere else.
      expect(key.stdout.split(secret).length - 1).toBe(1);
      expect(key.stderr).not.toContain(secret);
      const unknown = await builder(env, "keys", "create", "--email", "nobody@test.example");
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toMatch(/no user with email nobody@test.example/);

      const me = await fetch(`${server.url}/v1/me`, { headers: bearer(secret) });
      expect(me.status).toBe(200);
      expect(await me.json()).toEqual({ user_id: userId, email: "cli@test.example", role: "admin" }); // the first user of a server is its administrator
      expect(me.headers.get("x-ratelimit-limit-requests")).toBe("5");
      await server.services.auth.apiKeys.flush();

      // Without --scopes a key may only predict (the default), with --models only those models, with --expires until then.
      const narrow = await builder(
        env,
        "keys",
        "create",
        "--email",
        "cli@test.example",
        "--name",
        "scanner",
        "--models",
        "3,7",
        "--expires",
        "30d",
      );
      expect(narrow.code, narrow.stderr).toBe(0);
      expect(narrow.stderr).toMatch(/\(scopes predict; models 3,7; expires 20\d\d-/);
      const narrowMe = await fetch(`${server.url}/v1/me`, { headers: bearer(lastLine(narrow.stdout)) });
      expect(narrowMe.status).toBe(403);
      expect(((await narrowMe.json()) as { error: { code: string } }).error.code).toBe("api_key_scope_missing");
      const badScope = await builder(env, "keys", "create", "--email", "cli@test.example", "--scopes", "predict,everything");
      expect(badScope.code).toBe(2);
      expect(badScope.stderr).toMatch(/--scopes takes a comma-separated list of predict, read, build, admin/);

      const list = await builder(env, "keys", "list", "--email", "cli@test.example");
      expect(list.stdout).toMatch(/\sscanner\s.*\spredict\s+3,7\s/);
      expect(list.stdout).toMatch(/\sci\s.*\sread\s+all\s+5\s.*cli@test\.example/);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/^ID\s+NAME\s+PREFIX/);
      expect(list.stdout).toContain(secret.slice(0, 12));
      expect(list.stdout).not.toContain(secret);
      keyId = /^([0-9a-f-]{36})\s+ci\s/m.exec(list.stdout)?.[1];
      expect(keyId).toBeTruthy();

      // Roles through the socket: a later user is a member; the last administrator cannot be made one.
      const member = await builder(env, "users", "create", "--email", "member@test.example", "--password", "twelve chars ok");
      expect(member.stdout).toMatch(/^created user member@test.example$/m);
      const lastAdmin = await builder(env, "users", "set-role", "--email", "cli@test.example", "--role", "member");
      expect(lastAdmin.code).not.toBe(0);
      expect(lastAdmin.stderr).toMatch(/last active administrator/);
      const promoted = await builder(env, "users", "set-role", "--email", "member@test.example", "--role", "admin");
      expect(promoted.code, promoted.stderr).toBe(0);
      expect(promoted.stdout).toMatch(/member@test.example is now an administrator/);
      const promotedUser = await server.services.auth.users.findByEmail("member@test.example");
      expect(promotedUser?.role).toBe("admin");
      const entries = await server.services.audit.list(await personal(server.services.db, promotedUser!.id), { limit: 10, offset: 0 });
      expect(entries.data[0]).toMatchObject({ action: "role_changed", via: "cli", details: { from: "member", to: "admin" } });

      const revoke = await builder(env, "keys", "revoke", keyId!);
      expect(revoke.code, revoke.stderr).toBe(0);
      expect(revoke.stdout).toContain(`revoked API key ${keyId}`);
      expect((await fetch(`${server.url}/v1/me`, { headers: bearer(secret) })).status).toBe(403);
    } finally {
      await server.stop();
    }
    expect(fs.existsSync(path.join(dataDir, "admin.sock"))).toBe(false);

    // Server stopped: the CLI reads the folder directly again and sees what the server wrote.
    const listed = await builder(env, "keys", "list", "--email", "cli@test.example", "--json");
    const row = listed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((r) => r.id === keyId);
    expect(row.id).toBe(keyId);
    expect(row).toMatchObject({ scopes: ["read"], createdByEmail: "cli@test.example" });
    expect(row.revokedAt).toEqual(expect.any(String));
    expect(row.lastUsedAt).toEqual(expect.any(String));
    const missing = await builder(env, "keys", "revoke", secret.slice(0, -1) + (secret.endsWith("A") ? "B" : "A"));
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/not found/);
  }, 540_000);
});
