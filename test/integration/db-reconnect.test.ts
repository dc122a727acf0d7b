import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.js";
import { createThrowawayDatabase } from "../helpers/db.js";

// A Postgres restart or pg_terminate_backend closes idle pooled connections. Without an error listener on
// the pool, node-postgres raises it as an uncaught exception and the whole service goes down.
describe.runIf(process.env.TEST_DATABASE_URL)("Postgres connections closed by the server", () => {
  it("are reported, replaced, and do not crash the process", async () => {
    const throwaway = await createThrowawayDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-db-"));
    const reported: Error[] = [];
    const database = await openDatabase({ url: throwaway.url, dataDir, onError: (err) => reported.push(err) });
    try {
      await database.migrate();
      expect(await database.ping()).toBe(true);
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      const name = new URL(throwaway.url).pathname.slice(1);
      const killed = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
        [name],
      );
      await admin.end();
      expect(killed.rowCount).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 200));
      expect(reported.length).toBeGreaterThan(0);
      expect(await database.ping()).toBe(true);
    } finally {
      await database.close();
      await throwaway.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
