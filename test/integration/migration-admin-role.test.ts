import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_DIR } from "../../src/db/client.js";

// Migration 0009 on a database from before roles existed: the oldest account that is not being erased becomes the
// administrator, everyone else a member. The database is migrated up to 0008 first (a copy of migrations/ whose
// journal stops there), given accounts, then migrated to the end as an upgrade would.

describe("migration 0009: an existing install gets its administrator", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-migration-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("makes the oldest live account the administrator and leaves the others members", async () => {
    const before = path.join(dir, "migrations");
    fs.cpSync(MIGRATIONS_DIR, before, { recursive: true });
    const journalPath = path.join(before, "meta/_journal.json");
    const journal = JSON.parse(fs.readFileSync(journalPath, "utf8")) as { entries: Array<{ tag: string }> };
    const upTo = journal.entries.findIndex((e) => e.tag.startsWith("0009_"));
    expect(upTo).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, upTo);
    fs.writeFileSync(journalPath, JSON.stringify(journal));

    const client = await PGlite.create();
    const db = drizzle(client);
    try {
      await migrate(db, { migrationsFolder: before });
      await client.exec(`
        insert into users (email, password_hash, created_at, erasing_at) values
          ('erased@h.example', 'x', now() - interval '3 days', now()),
          ('first@h.example', 'x', now() - interval '2 days', null),
          ('second@h.example', 'x', now() - interval '1 day', null);`);
      await migrate(db, { migrationsFolder: MIGRATIONS_DIR });
      const { rows } = await client.query<{ email: string; role: string }>("select email, role from users order by created_at");
      expect(rows).toEqual([
        { email: "erased@h.example", role: "member" },
        { email: "first@h.example", role: "admin" },
        { email: "second@h.example", role: "member" },
      ]);
    } finally {
      await client.close();
    }
  });
});
