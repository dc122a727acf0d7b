import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config.js";
import { createServices, type Services } from "../../src/services.js";
import { createUserWithKey } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Issue 48 finding 10: after an erasure, the erased patient ids, a category value, a file name and the intended-use
// text were still in the embedded database's files as raw bytes (a deleted row stays in its page until the page is
// reused, and in the WAL segment that recorded its insert). The erasure now compacts the database (db/compaction.ts):
// the data folder is grepped byte for byte, before and after, with the server's own checkpoint on close.

vi.setConfig({ testTimeout: 120_000 });

/** Occurrences of each needle in every file under dir (the PGlite folder: tables, indexes, TOAST, WAL). */
function occurrences(dir: string, needles: string[]): Record<string, number> {
  const out = Object.fromEntries(needles.map((n) => [n, 0]));
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const bytes = fs.readFileSync(p);
        for (const n of needles) for (let i = bytes.indexOf(n); i >= 0; i = bytes.indexOf(n, i + 1)) out[n]++;
      }
    }
  };
  walk(dir);
  return out;
}

describe.skipIf(!haveFixturePython)("erasure compacts the embedded database", () => {
  let dataDir: string;
  let services: Services | undefined;
  const start = () => createServices(parseConfig({ BUILDER_DATA_DIR: dataDir, LOG_LEVEL: "silent" }), { runner: false });
  const pglite = () => path.join(dataDir, "pglite");

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-erasure-compaction-"));
  });
  afterAll(async () => {
    await services?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("an erased account's patient ids, category value, file name and intended use are not in the database files", async () => {
    services = await start();
    const server = { services } as TestServer;
    const alice = await createUserWithKey(server);
    const bob = await createUserWithKey(server);
    const erased = ["ZQXPAT-000417", "ZQXPAT-000418", "ZQXCAT-luminal-b", "ZQXFILE-cohort-2026", "ZQXUSE triage of screening"];
    const kept = "ZQYBOB intended use kept";
    const exp = await publishFixture(server, alice.userId, 1, servingFixtures().modelDir("tabular_binary"), 1, false);
    await services.experiments.repo.setLabels(exp.experimentUuid, { intended_use: `${erased[4]} mammograms in the clinic` });
    await services.experiments.repo.addEvent(exp.experimentUuid, "report", {
      samples: { patient_id: [erased[0], erased[1]] },
      categories: { subtype: [erased[2]] },
    });
    const csv = `patient_id,subtype,y\n${erased[0]},${erased[2]},1\n${erased[1]},basal,0\n`;
    await services.datasets.upload(alice.scope, `${alice.userId}/study/${erased[3]}.zip`, Readable.from(makeZip({ "data.csv": csv })));
    const bobs = await publishFixture(server, bob.userId, 1, servingFixtures().modelDir("tabular_binary"), 1, false);
    await services.experiments.repo.setLabels(bobs.experimentUuid, { intended_use: kept });
    await services.db.execute(sql`checkpoint`);
    const before = occurrences(pglite(), [...erased, kept]);
    for (const n of [...erased, kept]) expect(before[n], n).toBeGreaterThan(0);

    await services.erasure.begin({ userId: alice.userId, via: "session" });
    await services.erasure.finish(alice.userId);
    expect(await services.auth.users.findById(alice.userId)).toBeUndefined();
    await services.close();
    services = undefined;
    const after = occurrences(pglite(), [...erased, kept]);
    expect(Object.fromEntries(erased.map((n) => [n, after[n]]))).toEqual(Object.fromEntries(erased.map((n) => [n, 0])));
    expect(after[kept]).toBeGreaterThan(0); // the live row of another user is still there, of course
    expect(fs.existsSync(path.join(dataDir, "pglite.compaction-due"))).toBe(false);
  });

  it("a kill after the rows went but before the compaction: the next start compacts", async () => {
    services = await start();
    const needle = "ZQXLATE-patient-9001";
    // Bob's experiment, left by the first test.
    const { rows } = (await services.db.execute(sql`select id from experiments`)) as unknown as { rows: Array<{ id: string }> };
    expect(rows).toHaveLength(1);
    await services.experiments.repo.setLabels(rows[0].id, { intended_use: needle });
    await services.db.execute(sql`checkpoint`);
    // The erasure's order: the compaction marked due, the rows gone, then the process killed.
    await services.database.markCompactionDue();
    await services.experiments.repo.setLabels(rows[0].id, { intended_use: null });
    await services.close();
    services = undefined;
    expect(occurrences(pglite(), [needle])[needle]).toBeGreaterThan(0);
    services = await start();
    await services.close();
    services = undefined;
    expect(occurrences(pglite(), [needle])[needle]).toBe(0);
  });
});
