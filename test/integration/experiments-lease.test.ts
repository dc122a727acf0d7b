import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { createServices, type Services } from "../../src/services.js";
import { ExperimentRepository } from "../../src/experiments/repository.js";
import { createThrowawayDatabase, dbTargets } from "../helpers/db.js";
import { createUserWithKey } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";

// The lease in the experiments row is what keeps one job from running twice, whatever the queue does:
// one UPDATE decides who holds it, and every later write is conditional on still holding it.

describe.each(dbTargets())("experiment lease on %s", (target) => {
  let services: Services;
  let repo: ExperimentRepository;
  let userId: string;
  let drop: (() => Promise<void>) | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lease-"));
  beforeAll(async () => {
    const db = target === "postgres" ? await createThrowawayDatabase() : undefined;
    drop = db?.drop;
    services = await createServices(parseConfig({ LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) }), { runner: false });
    repo = new ExperimentRepository(services.db);
    userId = (await createUserWithKey({ services } as TestServer)).userId;
  });
  afterAll(async () => {
    await services?.close();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("lets exactly one of many concurrent runners take the lease", async () => {
    const row = (await repo.insert({ userId, experimentId: 1, request: {}, requestHash: "h1" }))!;
    const owners = Array.from({ length: 8 }, (_, i) => `runner-${i}`);
    const results = await Promise.all(owners.map((o) => repo.acquireLease(row.id, o, 30)));
    const winners = results.filter(Boolean);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!.leaseOwner!;
    for (const o of owners.filter((x) => x !== winner)) {
      expect(await repo.renewLease(row.id, o, 30)).toBeNull();
      expect(await repo.transition(row.id, "fetching", { owner: o })).toBeNull();
    }
    expect(await repo.transition(row.id, "fetching", { owner: winner })).not.toBeNull();
  });

  it("hands a lapsed lease to a new runner; the old holder's writes are then refused", async () => {
    const row = (await repo.insert({ userId, experimentId: 2, request: {}, requestHash: "h2" }))!;
    expect(await repo.acquireLease(row.id, "old", 1)).not.toBeNull();
    expect(await repo.acquireLease(row.id, "new", 1)).toBeNull();
    await new Promise((r) => setTimeout(r, 1300));
    const taken = await repo.acquireLease(row.id, "new", 30);
    expect(taken?.attempts).toBe(2);
    expect(await repo.renewLease(row.id, "old", 30)).toBeNull();
    expect(await repo.transition(row.id, "training", { owner: "old" })).toBeNull();
    expect(await repo.transition(row.id, "fetching", { owner: "new" })).not.toBeNull();
  });

  it("never leases a finished experiment", async () => {
    const row = (await repo.insert({ userId, experimentId: 3, request: {}, requestHash: "h3" }))!;
    await repo.transition(row.id, "cancelled", { fromStatus: ["queued"] });
    expect(await repo.acquireLease(row.id, "late", 30)).toBeNull();
    const after = await repo.byId(row.id);
    expect(after?.history).toEqual([expect.objectContaining({ status: "queued" }), expect.objectContaining({ status: "cancelled" })]);
  });
});
