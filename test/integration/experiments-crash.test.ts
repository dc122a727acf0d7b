import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { parseConfig } from "../../src/config.js";
import { redisConnection } from "../../src/jobs/bullmq.js";
import { models } from "../../src/db/schema.js";
import { createServices, type Services } from "../../src/services.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { createUserWithKey } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { api, dataRequest, tabularZip, waitFor, waitForStatus, type Api } from "./experiments-fixtures.js";

// Crash safety with real processes: `./builder serve` and `./builder worker` are started as children and killed
// with SIGKILL mid-training. Several processes share one database, so these need the real Postgres
// (TEST_DATABASE_URL); the BullMQ test needs the real Redis too (TEST_REDIS_URL). Both skip cleanly otherwise.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const hasPg = Boolean(process.env.TEST_DATABASE_URL);
const hasRedis = Boolean(process.env.TEST_REDIS_URL);

const pythonOf = (uuid: string) => {
  try {
    return execFileSync("pgrep", ["-f", `work/${uuid}/spec.json`])
      .toString()
      .trim()
      .split("\n")
      .filter(Boolean);
  } catch {
    return [];
  }
};

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

interface Cluster {
  env: Record<string, string>;
  services: Services;
  client?: Api;
  userId: string;
  key: string;
  zipPath: string;
  dataCols: string[];
  children: ChildProcess[];
  start(command: "serve" | "worker", extraEnv?: Record<string, string>, args?: string[]): ChildProcess;
  close(): Promise<void>;
}

/** One throwaway Postgres database and data folder shared by the child processes and the test. */
async function cluster(env: Record<string, string>): Promise<Cluster> {
  const db = await createThrowawayDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-crash-"));
  const base: Record<string, string> = {
    DATABASE_URL: db.url,
    BUILDER_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    JOB_LEASE_S: "3",
    ...env,
  };
  const services = await createServices(parseConfig({ ...base, LOG_LEVEL: "silent" }), { runner: false });
  const user = await createUserWithKey({ services } as TestServer);
  const data = tabularZip();
  const zipPath = `${user.userId}/tabular/data.zip`;
  await services.bucket.write(zipPath, Readable.from(data.zip));
  const children: ChildProcess[] = [];
  return {
    env: base,
    services,
    userId: user.userId,
    key: user.key,
    zipPath,
    dataCols: data.dataCols,
    children,
    start(command, extraEnv = {}, args = []) {
      const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", command, ...args], {
        cwd: ROOT,
        env: { ...process.env, ...base, ...extraEnv },
        stdio: ["ignore", "ignore", process.env.TEST_LOG_LEVEL ? "inherit" : "ignore"],
      });
      children.push(child);
      return child;
    },
    async close() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
      if (base.REDIS_URL && "BULLMQ_QUEUE" in base) {
        // Leave nothing of this test's queue behind in the shared Redis.
        const connection = redisConnection(base.REDIS_URL);
        const keys = await connection.keys(`bull:${base.BULLMQ_QUEUE}:*`);
        if (keys.length) await connection.del(...keys);
        await connection.quit();
      }
      await services.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function waitHealthy(url: string) {
  await waitFor(`${url} to answer`, async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok, 60_000, 300);
}

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
