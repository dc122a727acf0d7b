import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { models } from "../../src/db/schema.js";
import { api, dataRequest, waitFor, waitForStatus } from "./experiments-fixtures.js";
import { cluster, freePort, pythonOf, waitHealthy, type Cluster } from "./cluster-fixtures.js";

// Crash safety with real processes: `./builder serve` and `./builder worker` are started as children and killed
// with SIGKILL mid-training. Several processes share one database, so these need the real Postgres
// (TEST_DATABASE_URL); the BullMQ test needs the real Redis too (TEST_REDIS_URL). Both skip cleanly otherwise.

const hasPg = Boolean(process.env.TEST_DATABASE_URL);
const hasRedis = Boolean(process.env.TEST_REDIS_URL);

// Real training under a shared, loaded CPU: minutes, not seconds.
vi.setConfig({ testTimeout: 300000 });

describe.skipIf(!hasPg)("restart of ./builder serve mid-job", () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await cluster({});
  });
  afterAll(async () => {
    await c?.close();
  });

  it("kill -9 of serve while training: the pipeline dies with it, the next serve re-runs the job to the end", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const first = c.start("serve", {}, ["--port", String(port)]);
    await waitHealthy(url);
    const client = api(url, c.key);
    expect((await client.post("/v1/experiments", dataRequest(c.userId, 1, c.zipPath, c.dataCols, { time_budget_s: 8 }))).status).toBe(202);
    await waitForStatus(client, 1, ["training"], 60_000);
    const row = (await c.services.experiments.repo.byUserNumber(c.userId, 1))!;
    await waitFor("the pipeline process", async () => pythonOf(row.id).length > 0, 30_000, 100);
    first.kill("SIGKILL");
    // The pipeline asked the kernel to follow its parent (PR_SET_PDEATHSIG): no orphan keeps training.
    await waitFor("the orphaned pipeline to be gone", async () => pythonOf(row.id).length === 0, 5_000, 100);

    const second = c.start("serve", {}, ["--port", String(port)]);
    await waitHealthy(url);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset", "cancelled"], 180_000);
    expect(["ready", "failed"]).toContain(done.status);
    expect(done.status).toBe("ready"); // nothing in this job should fail; a failure would carry its reason here
    const statuses = done.history.map((h: { status: string }) => h.status);
    expect(statuses.slice(0, 4)).toEqual(["queued", "fetching", "validating", "training"]);
    expect(done.history.find((h: { attempt?: number }) => h.attempt === 2)?.status).toBe("fetching");
    expect(statuses.filter((s: string) => s === "ready")).toHaveLength(1);
    expect(done.attempts).toBe(2);
    second.kill("SIGTERM");
  });
});

describe.skipIf(!hasPg || !hasRedis)("BullMQ workers on the real Redis", () => {
  let c: Cluster;
  let serveUrl: string;
  beforeAll(async () => {
    c = await cluster({ REDIS_URL: process.env.TEST_REDIS_URL!, BULLMQ_QUEUE: `exp-test-${Date.now()}-${process.pid}` });
    const port = await freePort();
    serveUrl = `http://127.0.0.1:${port}`;
    c.start("serve", { BUILDER_RUNNER: "bullmq" }, ["--port", String(port)]);
    await waitHealthy(serveUrl);
    c.client = api(serveUrl, c.key);
  });
  afterAll(async () => {
    await c?.close();
  });

  it("kill -9 of the worker mid-job: the job completes once, on the other worker, never on two at once", async () => {
    const workers = [c.start("worker"), c.start("worker")];
    const client = c.client!;
    expect((await client.post("/v1/experiments", dataRequest(c.userId, 1, c.zipPath, c.dataCols, { time_budget_s: 8 }))).status).toBe(202);
    const repo = c.services.experiments.repo;
    await waitForStatus(client, 1, ["training"], 90_000);
    const row = (await repo.byUserNumber(c.userId, 1))!;
    const holderPid = Number(row.leaseOwner!.split(":").at(-2));
    const holder = workers.find((w) => w.pid === holderPid);
    expect(holder, `lease owner ${row.leaseOwner} is one of the workers`).toBeDefined();
    await waitFor("the pipeline process", async () => pythonOf(row.id).length > 0, 30_000, 100);

    // Sample the pipeline processes for this experiment throughout: never more than one at a time.
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, pythonOf(row.id).length)), 150);
    holder!.kill("SIGKILL");
    const killedAt = Date.now();
    try {
      const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset", "cancelled"], 180_000);
      expect(done.status).toBe("ready");
      const retried = done.history.find((h: { attempt?: number }) => h.attempt === 2);
      expect(retried?.status).toBe("fetching");
      expect(Date.parse(retried.at)).toBeGreaterThan(killedAt);
      expect(done.history.filter((h: { status: string }) => h.status === "ready")).toHaveLength(1);
      expect(done.attempts).toBe(2);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeLessThanOrEqual(1);
    // The workers wrote the log; serve answers it (here they share the data folder; the bucket copy is tested in e2e).
    const logs = await client.get("/v1/experiments/1/logs");
    expect(logs.body).toContain("status ready");
    const published = await c.services.db.select().from(models).where(eq(models.experimentUuid, row.id));
    expect(published.map((m) => m.version)).toEqual([1]);
    // The second attempt ran every stage from the start, once.
    const history = (await repo.byId(row.id))!.history as Array<{ status: string; attempt?: number }>;
    const second = history.slice(history.findIndex((h) => h.attempt === 2)).map((h) => h.status);
    expect(second).toEqual(["fetching", "validating", "training", "evaluating", "publishing", "ready"]);
  });

  it("cancel posted to serve reaches the worker running the job: its pipeline is gone within 5 s", async () => {
    const client = c.client!;
    expect((await client.post("/v1/experiments", dataRequest(c.userId, 2, c.zipPath, c.dataCols, { time_budget_s: 120 }))).status).toBe(
      202,
    );
    await waitForStatus(client, 2, ["training"], 90_000);
    const row = (await c.services.experiments.repo.byUserNumber(c.userId, 2))!;
    await waitFor("the pipeline process", async () => pythonOf(row.id).length > 0, 30_000, 100);
    const t0 = Date.now();
    expect((await client.post("/v1/experiments/2/cancel")).status).toBe(202);
    await waitFor("the pipeline to be gone", async () => pythonOf(row.id).length === 0, 5_000, 100);
    const done = await waitForStatus(client, 2, ["cancelled"], 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(done.status).toBe("cancelled");
  });
});
