import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config.js";
import { createServices, type Services } from "../../src/services.js";
import { createUserWithKey } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { waitFor } from "./experiments-fixtures.js";

// Issue 48 finding 7: after a kill -9 in the middle of an account erasure, the restarted server finished the job but
// the erased user's two cached model copies stayed in model-cache/ (their models rows were already gone, so no
// removal was announced again). Each replica now sweeps its model cache against the models table at start and when
// an erasure ends. On the embedded database (PGlite), in one process: the crash is simulated by putting back the
// cache folders a kill -9 would have left (the copies on disk when the models rows went), then starting again.

vi.setConfig({ testTimeout: 120_000 });

describe.skipIf(!haveFixturePython)("account erasure and the model cache", () => {
  const fx = haveFixturePython ? servingFixtures() : (undefined as never);
  let dataDir: string;
  let services: Services | undefined;
  const cacheDir = () => path.join(dataDir, "model-cache");
  /** The model copies on disk, in every replica's folder (model-cache/<replica>/<models row id>). */
  const cached = () =>
    fs
      .readdirSync(cacheDir())
      .flatMap((replica) => fs.readdirSync(path.join(cacheDir(), replica)))
      .sort();
  const start = (runner: boolean) =>
    createServices(parseConfig({ BUILDER_DATA_DIR: dataDir, LOG_LEVEL: "silent", JOB_LEASE_S: "3" }), { runner });

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-erasure-cache-"));
  });
  afterAll(async () => {
    await services?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("a restart after a kill mid-erasure finishes it and leaves none of the user's models in model-cache/", async () => {
    services = await start(false);
    const server = { services } as TestServer;
    const alice = await createUserWithKey(server);
    const bob = await createUserWithKey(server);
    const a1 = await publishFixture(server, alice.userId, 1, fx.modelDir("tabular_binary"), 1, false);
    const a2 = await publishFixture(server, alice.userId, 2, fx.modelDir("tabular_binary"), 1, false);
    const b1 = await publishFixture(server, bob.userId, 1, fx.modelDir("tabular_binary"), 1, false);
    for (const [u, n] of [
      [alice.scope.workspace.id, 1],
      [alice.scope.workspace.id, 2],
      [bob.scope.workspace.id, 1],
    ] as const)
      await services.serving.cache.get(u, n);
    expect(cached()).toEqual([a1.id, a2.id, b1.id].sort());
    const leftByKill = fs.mkdtempSync(path.join(os.tmpdir(), "builder-erasure-cache-copy-"));
    fs.cpSync(cacheDir(), leftByKill, { recursive: true });

    // The erasure's first steps, as DELETE /v1/me runs them: marked, signed out, every experiment unpublished.
    expect(await services.auth.users.beginErasure(alice.userId)).toBe(true);
    for (const row of await services.experiments.repo.markAllDeleting(alice.userId)) await services.experiments.beginDeletion(row.id);
    expect(await services.serving.repo.byId(a1.id)).toBeNull();
    // The kill: the process goes, its copies stay on disk as they were (its own removals never ran).
    await services.close();
    services = undefined;
    fs.rmSync(cacheDir(), { recursive: true, force: true });
    fs.cpSync(leftByKill, cacheDir(), { recursive: true });
    fs.rmSync(leftByKill, { recursive: true, force: true });
    expect(cached()).toContain(a1.id);

    services = await start(true);
    await waitFor("the erasure to finish", async () => !(await services!.auth.users.findById(alice.userId)), 60_000, 200);
    expect(cached()).toEqual([b1.id]);
    // Bob's copy is kept and still serves.
    expect((await services.serving.cache.get(bob.scope.workspace.id, 1)).row.id).toBe(b1.id);
  });

  it("the end of an erasure makes every replica drop copies whose models are gone (a removal it missed)", async () => {
    services ??= await start(true);
    const server = { services } as TestServer;
    const carol = await createUserWithKey(server);
    await publishFixture(server, carol.userId, 1, fx.modelDir("tabular_binary"), 1, false);
    // A copy this replica kept of a version deleted while its notifications were lost.
    const missed = "0b9d3f0e-6a55-4c1e-9a7e-2f4c1d1e7a11";
    fs.mkdirSync(path.join(services.serving.cache.dir, missed));
    fs.writeFileSync(path.join(services.serving.cache.dir, missed, "model.onnx"), "onnx bytes of an erased user's model");
    const before = cached();
    expect(before).toContain(missed);
    await services.erasure.begin({ userId: carol.userId, via: "session" });
    await waitFor("carol's erasure to finish", async () => !(await services!.auth.users.findById(carol.userId)), 60_000, 200);
    await waitFor("the cache sweep", async () => !cached().includes(missed), 10_000, 50);
    expect(cached()).toEqual(before.filter((id) => id !== missed));
  });
});
