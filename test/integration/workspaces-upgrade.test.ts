// Issue 50, done-when 4: a database made by the schema before workspaces, with its data, migrated forward, keeps
// every user's keys and experiments: each row lands in its owner's personal workspace and the API answers as before.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { generateApiKey, sha256Hex } from "../../src/auth/secrets.js";
import { parseConfig } from "../../src/config.js";
import { MIGRATIONS_DIR } from "../../src/db/client.js";
import { startServer, type RunningServer } from "../../src/server.js";
import { bearer } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";

const WORKSPACES_MIGRATION = "0018_workspaces";

/** A copy of ./migrations that stops just before the workspaces migration: today's main schema. */
function migrationsBeforeWorkspaces(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-migrations-"));
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_DIR, "meta/_journal.json"), "utf8"));
  const at = journal.entries.findIndex((e: { tag: string }) => e.tag === WORKSPACES_MIGRATION);
  expect(at).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  fs.mkdirSync(path.join(dir, "meta"));
  fs.writeFileSync(path.join(dir, "meta/_journal.json"), JSON.stringify(journal));
  for (const e of journal.entries) fs.copyFileSync(path.join(MIGRATIONS_DIR, `${e.tag}.sql`), path.join(dir, `${e.tag}.sql`));
  return dir;
}

describe.skipIf(!process.env.TEST_DATABASE_URL)("upgrade to workspaces on postgres", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-upgrade-"));
  let drop: (() => Promise<void>) | undefined;
  let server: RunningServer | undefined;
  let client: pg.Client | undefined;
  afterAll(async () => {
    await client?.end();
    await server?.stop();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("gives every old row its owner's personal workspace and keeps serving every old key and experiment", async () => {
    const db = await createThrowawayDatabase();
    drop = db.drop;
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await migrate(drizzle(client) as never, { migrationsFolder: migrationsBeforeWorkspaces() });

    // Two users of the old schema, each with a key, an experiment and a model; one with an audit event.
    const people = [] as { id: string; key: string; email: string }[];
    for (const email of ["ana@example.org", "ben@example.org"]) {
      const { rows } = await client.query<{ id: string }>("insert into users (email, password_hash) values ($1, 'x') returning id", [
        email,
      ]);
      const key = generateApiKey();
      await client.query("insert into api_keys (user_id, name, prefix, key_hash) values ($1, 'old', $2, $3)", [
        rows[0].id,
        key.slice(0, 12),
        sha256Hex(key),
      ]);
      const exp = await client.query<{ id: string }>(
        `insert into experiments (user_id, experiment_id, request, request_hash, status)
         values ($1, 1, '{"name":"old"}'::jsonb, 'h', 'queued') returning id`,
        [rows[0].id],
      );
      await client.query(
        `insert into models (user_id, experiment_uuid, experiment_id, version, kind, store_path, manifest)
         values ($1, $2, 1, 1, 'tabular', 'x/model', '{}'::jsonb)`,
        [rows[0].id, exp.rows[0].id],
      );
      people.push({ id: rows[0].id, key, email });
    }
    await client.query("insert into audit_events (actor_id, via, action, target) values ($1, 'cli', 'old.action', 'x')", [people[0].id]);
    const before = await client.query("select id, user_id, experiment_id, request, request_hash from experiments order by id");

    // Forward: the server applies the workspaces migration as it starts.
    const config = parseConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir, DATABASE_URL: db.url });
    server = await startServer(config, { port: 0, host: "127.0.0.1" });

    for (const p of people) {
      const ws = await client.query<{ id: string; name: string }>("select id, name from workspaces where personal_owner_id = $1", [p.id]);
      expect(ws.rows).toHaveLength(1);
      expect(ws.rows[0].name).toBe("Personal");
      const members = await client.query("select user_id, role from workspace_members where workspace_id = $1", [ws.rows[0].id]);
      expect(members.rows).toEqual([{ user_id: p.id, role: "owner" }]);
      for (const table of ["api_keys", "experiments", "models"]) {
        const { rows } = await client.query(`select workspace_id from ${table} where user_id = $1`, [p.id]);
        expect(rows.length, table).toBe(1);
        expect(rows[0].workspace_id, table).toBe(ws.rows[0].id);
      }
      // The old key still works, and shows the user's own experiment number 1 and nobody else's.
      const res = await fetch(`${server.url}/v1/experiments`, { headers: bearer(p.key) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { experiment_id: number }[] };
      expect(body.data.map((e) => e.experiment_id)).toEqual([1]);
    }
    const audit = await client.query("select workspace_id from audit_events where action = 'old.action'");
    const personal0 = await client.query("select id from workspaces where personal_owner_id = $1", [people[0].id]);
    expect(audit.rows[0].workspace_id).toBe(personal0.rows[0].id);
    expect((await client.query("select id, user_id, experiment_id, request, request_hash from experiments order by id")).rows).toEqual(
      before.rows,
    );

    // After the upgrade: a new user gets a personal workspace in the same insert, and what they write lands in it.
    const fresh = await client.query<{ id: string }>(
      "insert into users (email, password_hash) values ('cy@example.org', 'x') returning id",
    );
    const ws = await client.query<{ id: string }>("select id from workspaces where personal_owner_id = $1", [fresh.rows[0].id]);
    expect(ws.rows).toHaveLength(1);
    const key = await client.query<{ workspace_id: string }>(
      "insert into api_keys (user_id, name, prefix, key_hash) values ($1, 'new', 'bld_new', 'newhash') returning workspace_id",
      [fresh.rows[0].id],
    );
    expect(key.rows[0].workspace_id).toBe(ws.rows[0].id);
  });
});
