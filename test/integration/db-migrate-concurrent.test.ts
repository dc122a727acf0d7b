import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.js";
import { createThrowawayDatabase } from "../helpers/db.js";

// Several Builder processes start against one new database at once: two api replicas and two workers of a
// `docker stack deploy` or a Kubernetes rollout, which have no start order. Each applies the migrations at start;
// they must wait for each other, not fail on the tables another one is creating.
describe.runIf(process.env.TEST_DATABASE_URL)("migrations from processes starting together", () => {
  it("are applied once, and every process starts", async () => {
    const throwaway = await createThrowawayDatabase();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-db-"));
    const databases: Database[] = [];
    try {
      for (let i = 0; i < 4; i++) databases.push(await openDatabase({ url: throwaway.url, dataDir }));
      const outcomes = await Promise.allSettled(databases.map((d) => d.migrate()));
      const failures = outcomes.flatMap((o) => (o.status === "rejected" ? [String((o.reason as Error).cause ?? o.reason)] : []));
      expect(failures).toEqual([]);
      const applied = fs.readdirSync(path.resolve("migrations")).filter((f) => f.endsWith(".sql")).length;
      const rows = await databases[0].db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
      expect((rows as unknown as { rows: Array<{ n: number }> }).rows[0].n).toBe(applied);
    } finally {
      await Promise.all(databases.map((d) => d.close()));
      await throwaway.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
