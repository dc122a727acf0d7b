import { spawnSync } from "node:child_process";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, dataRequest, visionRequest, waitFor, waitForStatus, type Api } from "./experiments-fixtures.js";
import { cluster, freePort, imageZip, ROOT, waitHealthy, type Cluster } from "./cluster-fixtures.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// Two real `./builder worker` processes of different capacity on the real Postgres and Redis, behind a real
// `./builder serve` (BUILDER_RUNNER=bullmq), training real models (issue 54 item 2): a worker that declares one
// GPU (simulated: this host has none, so its GPU slot trains on the CPU) with one CPU slot beside it, and a
// CPU-only worker with one CPU slot. The image experiment must run in the GPU worker's GPU slot; tables in CPU
// slots; a worker drained with `./builder worker drain` must take nothing new. What each process did is read
// from the administrators' API (GET /v1/admin/workers) and the experiments' own logs.

vi.setConfig({ testTimeout: 400_000 });

const hasPg = Boolean(process.env.TEST_DATABASE_URL);
const hasRedis = Boolean(process.env.TEST_REDIS_URL);
const METRICS_TOKEN = "a-metrics-token-for-this-test";

interface WorkerView {
  id: string;
  pid: number;
  status: string;
  gpus: Array<{ simulated?: boolean; memory_mib: number | null }>;
  slots: Array<{ device: string; busy: boolean; job: { experiment_id: number } | null }>;
}
interface Operations {
  runner: string;
  workers: WorkerView[];
  queues: Array<{ need: string; waiting: number; active: number }>;
  running: Array<{ experiment_id: number; worker: string; device: string | null; kind: string }>;
}

/** `./builder worker <args>` run to its end with the cluster's environment (drain, list). */
function builderWorker(c: Cluster, args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", "src/main.ts", "worker", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...c.env },
    encoding: "utf8",
  });
}

describe.skipIf(!hasPg || !hasRedis)("workers that say what they can run: two real workers of different capacity", () => {
  let c: Cluster;
  let admin: Api;
  let user: Api;
  let serveUrl: string;
  let gpuPid: number;
  let cpuPid: number;
  const ops = async () => (await admin.get("/v1/admin/workers")).body as Operations;
  const workerOf = async (pid: number) => (await ops()).workers.find((w) => w.pid === pid);

  beforeAll(async () => {
    c = await cluster({ REDIS_URL: process.env.TEST_REDIS_URL!, BULLMQ_QUEUE: `workers-test-${Date.now()}-${process.pid}` });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    c.start("serve", { BUILDER_RUNNER: "bullmq", METRICS_TOKEN }, ["--port", String(port)]);
    await waitHealthy(url);
    serveUrl = url;
    const { auth } = c.services;
    const a = await auth.users.create({ email: "ops@hospital.example", password: "an administrator's password", role: "admin" });
    admin = api(url, (await auth.apiKeys.create(a.id, { scopes: ALL_KEY_SCOPES, name: "ops" })).key);
    user = api(url, c.key);
    await c.services.bucket.write(`${c.userId}/vision/data.zip`, Readable.from(await imageZip()));
    // CUDA_VISIBLE_DEVICES="" hides any real GPU, so the CPU worker is CPU-only on a GPU host too.
    gpuPid = c.start("worker", { CUDA_VISIBLE_DEVICES: "", BUILDER_CPU_SLOTS: "1" }, ["--simulate-gpus", "1x80GB"]).pid!;
    cpuPid = c.start("worker", { CUDA_VISIBLE_DEVICES: "" }).pid!;
    await waitFor(
      "both workers to register",
      async () => (await ops()).workers.filter((w) => w.status === "active").length === 2,
      90_000,
      300,
    );
  });
  afterAll(async () => {
    await c?.close();
  });

  it("each worker registers what it can run", async () => {
    const view = await ops();
    expect(view.runner).toBe("bullmq");
    const gpu = view.workers.find((w) => w.pid === gpuPid)!;
    const cpu = view.workers.find((w) => w.pid === cpuPid)!;
    expect(gpu.gpus).toEqual([{ index: "0", name: "simulated GPU", memory_mib: 80 * 1024, simulated: true }]);
    expect(gpu.slots.map((s) => s.device)).toEqual(["cuda", "cpu"]);
    expect(cpu.gpus).toEqual([]);
    expect(cpu.slots.map((s) => s.device)).toEqual(["cpu"]);
    expect((await user.get("/v1/admin/workers")).status).toBe(403); // administrators only
    const metrics = await (await fetch(`${serveUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toContain('builder_workers{status="active"} 2');
    expect(metrics).toContain('builder_queue_jobs{need="gpu",state="waiting"} 0');
  });

  it("the image experiment goes to the GPU worker's GPU slot, the table to a CPU slot, and both train to ready", async () => {
    expect(
      (await user.post("/v1/experiments", visionRequest(c.userId, 1, `${c.userId}/vision/data.zip`, { time_budget_s: 5 }))).status,
    ).toBe(202);
    expect((await user.post("/v1/experiments", dataRequest(c.userId, 2, c.zipPath, c.dataCols, { time_budget_s: 5 }))).status).toBe(202);
    const seen = new Map<number, { worker: string; device: string | null }>();
    await waitFor(
      "both experiments to be running in a slot",
      async () => {
        for (const r of (await ops()).running) if (r.device) seen.set(r.experiment_id, { worker: r.worker, device: r.device });
        return seen.size === 2;
      },
      120_000,
      200,
    );
    const gpuWorker = (await workerOf(gpuPid))!;
    expect(seen.get(1)).toEqual({ worker: gpuWorker.id, device: "cuda" });
    expect(seen.get(2)!.device).toBe("cpu");
    for (const n of [1, 2]) {
      const done = await waitForStatus(user, n, ["ready", "failed", "invalid_dataset", "cancelled"], 300_000);
      expect(done.failure_reason).toBeNull();
      expect(done.status).toBe("ready");
    }
    const log = (await user.get("/v1/experiments/1/logs")).body as string;
    expect(log).toContain(`on runner ${gpuWorker.id}, slot 0: GPU 0 (simulated GPU: trains on the CPU)`);
  });

  it("`./builder worker drain` stops the CPU worker taking jobs: the next table goes to the GPU worker's CPU slot", async () => {
    const cpuWorker = (await workerOf(cpuPid))!;
    // --wait returns once the worker runs nothing (it is idle here: at once).
    const drained = builderWorker(c, ["drain", "--wait", cpuWorker.id]);
    expect(drained.stderr).toBe("");
    expect(drained.status).toBe(0);
    expect(drained.stdout).toContain(`draining ${cpuWorker.id}`);
    expect(drained.stdout).toContain(`drained: ${cpuWorker.id}`);
    expect((await workerOf(cpuPid))?.status).toBe("drained");

    expect((await user.post("/v1/experiments", dataRequest(c.userId, 3, c.zipPath, c.dataCols, { time_budget_s: 5 }))).status).toBe(202);
    let ranOn: string | undefined;
    await waitFor(
      "the table to be running",
      async () => {
        ranOn = (await ops()).running.find((r) => r.experiment_id === 3 && r.device)?.worker;
        return Boolean(ranOn);
      },
      120_000,
      200,
    );
    expect(ranOn).toBe((await workerOf(gpuPid))!.id);
    expect((await workerOf(cpuPid))!.slots.every((s) => !s.busy)).toBe(true);
    expect((await waitForStatus(user, 3, ["ready", "failed", "invalid_dataset", "cancelled"], 300_000)).status).toBe("ready");

    const listed = builderWorker(c, ["list"]);
    expect(listed.stdout).toMatch(new RegExp(`${cpuWorker.id}  drained`));
    expect(builderWorker(c, ["drain", "no-such-worker"]).status).toBe(2);
  });
});
