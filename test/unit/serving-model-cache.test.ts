import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { ModelCache, ModelNotFound } from "../../src/serving/model-cache.js";
import type { ModelRepository, ModelRow } from "../../src/serving/model-repository.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";

// The cache on its own: lazy load from the bucket, one load for concurrent first requests, LRU by bytes, swap on publish.
describe.skipIf(!haveFixturePython)("ModelCache", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-model-cache-"));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const fx = servingFixtures();
  const bucket = new LocalBucket(path.join(tmp, "bucket"));
  const rows: ModelRow[] = [];
  let lookups = 0;
  const repo = {
    current: async (workspaceId: string, experimentId: number) => {
      lookups++;
      // The one made current last (migration 0010), the newest version on a tie.
      const at = (r: ModelRow) => (r.madeCurrentAt ? r.madeCurrentAt.getTime() : 0);
      return (
        rows
          .filter((r) => r.workspaceId === workspaceId && r.experimentId === experimentId)
          .sort((a, b) => at(b) - at(a) || b.version - a.version)[0] ?? null
      );
    },
    byId: async (id: string) => rows.find((r) => r.id === id) ?? null,
  } as unknown as ModelRepository;

  async function publish(experimentId: number, name: string, version = 1): Promise<ModelRow> {
    const storePath = `models/u1/${experimentId}/v${version}/`;
    for (const f of ["model.onnx", "manifest.json"]) await bucket.uploadFile(path.join(fx.modelDir(name), f), storePath + f);
    const row = {
      id: `${experimentId}-${version}`,
      userId: "u1",
      workspaceId: "u1",
      experimentUuid: "e",
      experimentId,
      version,
      kind: "x",
      storePath,
      manifest: JSON.parse(fs.readFileSync(path.join(fx.modelDir(name), "manifest.json"), "utf8")),
      createdAt: new Date(),
    } as ModelRow;
    rows.push(row);
    return row;
  }
  const sizeOf = (name: string) => fs.statSync(path.join(fx.modelDir(name), "model.onnx")).size;

  it("loads lazily once, bounds memory by LRU and swaps versions on publish", async () => {
    await publish(1, "vision_binary");
    await publish(2, "vision_multilabel");
    await publish(3, "tabular_binary");
    // Room for the two vision models but not a third model.
    const cache = new ModelCache({
      bucket,
      repo,
      cacheDir: path.join(tmp, "cache"),
      maxBytes: sizeOf("vision_binary") + sizeOf("vision_multilabel") + 10,
      intraOpThreads: 1,
      logger: pino({ level: "silent" }),
      latestTtlMs: 60_000,
    });
    const [a, b] = await Promise.all([cache.get("u1", 1), cache.get("u1", 1)]);
    expect(a).toBe(b); // concurrent first requests share one load
    await cache.get("u1", 2);
    expect(cache.stats().models).toBe(2);
    await cache.get("u1", 1); // 1 is now the most recently used
    await cache.get("u1", 3); // over the bound: the least recently used (2) goes
    expect(cache.stats().ids.sort()).toEqual(["1-1", "3-1"]);
    await new Promise((r) => setTimeout(r, 200)); // the local copy is removed in the background
    expect(fs.existsSync(path.join(cache.dir, "2-1"))).toBe(false);
    expect(cache.stats().bytes).toBeLessThanOrEqual(sizeOf("vision_binary") + sizeOf("vision_multilabel") + 10);
    // Publishing v2 of experiment 1: warm loads it and drops v1; get() answers v2 without a database lookup.
    const v2 = await publish(1, "vision_multiclass", 2);
    await cache.warm(v2);
    const before = lookups;
    expect((await cache.get("u1", 1)).row.version).toBe(2);
    expect(lookups).toBe(before);
    expect(cache.stats().ids).not.toContain("1-1");
    await expect(cache.get("u1", 42)).rejects.toBeInstanceOf(ModelNotFound);
    await cache.close();
  });

  it("two replicas sharing one data folder keep separate copies: one's eviction never removes the other's", async () => {
    const shared = path.join(tmp, "cache-shared");
    const opts = { bucket, repo, cacheDir: shared, maxBytes: 1e9, intraOpThreads: 1, logger: pino({ level: "silent" }) };
    const a = new ModelCache(opts);
    const b = new ModelCache(opts);
    expect(a.dir).not.toBe(b.dir);
    const v1 = await publish(6, "tabular_binary", 1);
    await Promise.all([a.load(v1), b.load(v1)]);
    // A moves on to v2 and drops v1 (what an operating point saved elsewhere does); B still has v1 and its copy.
    const v2 = await publish(6, "tabular_binary", 2);
    await a.warm(v1);
    await a.warm(v2);
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(path.join(a.dir, v1.id, "model.onnx"))).toBe(false);
    expect(fs.existsSync(path.join(b.dir, v1.id, "model.onnx"))).toBe(true);
    await a.close();
    expect(fs.existsSync(a.dir)).toBe(false);
    await b.close();
  });

  it("the sweep looks into every replica's folder and removes the folder of a replica of this host whose process is gone", async () => {
    const root = path.join(tmp, "cache-sweep");
    const published = { id: "5d0c6a38-3c1f-4b8e-9f51-7f0e2a9b4c22" }; // a version still published
    const gone = "0b9d3f0e-6a55-4c1e-9a7e-2f4c1d1e7a11"; // an erased user's
    const sweepRepo = {
      ...repo,
      existingIds: async (ids: string[]) => new Set(ids.filter((id) => id !== gone)),
    } as unknown as ModelRepository;
    const opts = { bucket, repo: sweepRepo, cacheDir: root, maxBytes: 1e9, intraOpThreads: 1, logger: pino({ level: "silent" }) };
    const live = new ModelCache(opts);
    const sweeper = new ModelCache(opts);
    // A live replica (this process) holds a copy of an erased version and one of a published one.
    for (const id of [gone, published.id]) {
      fs.mkdirSync(path.join(live.dir, id));
      fs.writeFileSync(path.join(live.dir, id, "model.onnx"), "x");
    }
    // A replica of this host whose process has exited (a pid no process has: a child that ran and ended).
    const { spawnSync } = await import("node:child_process");
    const deadPid = spawnSync(process.execPath, ["-e", "0"]).pid;
    const dead = path.join(root, `${os.hostname()}-${deadPid}-0123abcd`);
    fs.mkdirSync(path.join(dead, published.id), { recursive: true });
    await sweeper.sweepOrphans();
    expect(fs.existsSync(dead)).toBe(false);
    expect(fs.existsSync(path.join(live.dir, gone))).toBe(false);
    expect(fs.existsSync(path.join(live.dir, published.id))).toBe(true);
    await live.close();
    await sweeper.close();
  });

  it("switches to a version made current elsewhere, an older one too (rollback); a replica that never served it loads nothing", async () => {
    const cache = new ModelCache({
      bucket,
      repo,
      cacheDir: path.join(tmp, "cache-current"),
      maxBytes: 1e9,
      intraOpThreads: 1,
      logger: pino({ level: "silent" }),
      latestTtlMs: 600_000, // only the notification can move it
    });
    const v1 = await publish(5, "tabular_binary", 1);
    v1.madeCurrentAt = new Date(1000);
    const v2 = await publish(5, "tabular_binary", 2);
    v2.madeCurrentAt = new Date(2000);
    // Never served here: the notification loads nothing.
    await cache.madeCurrent("u1", 5, v2.id);
    expect(cache.stats().ids).not.toContain(v2.id);
    expect((await cache.get("u1", 5)).row.version).toBe(2);
    // Rollback elsewhere: v1 made current after v2.
    v1.madeCurrentAt = new Date(3000);
    await cache.madeCurrent("u1", 5, v1.id);
    expect((await cache.get("u1", 5)).row.version).toBe(1);
    expect(cache.stats().ids).toContain(v1.id);
    expect(cache.stats().ids).not.toContain(v2.id);
    // A late notification of the earlier change does not step back.
    await cache.madeCurrent("u1", 5, v2.id);
    expect((await cache.get("u1", 5)).row.version).toBe(1);
    await cache.close();
  });
});
