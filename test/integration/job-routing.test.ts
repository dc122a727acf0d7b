import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config.js";
import type { ExperimentRepository } from "../../src/experiments/repository.js";
import { BullmqDispatcher } from "../../src/jobs/bullmq.js";
import { startBullmqWorker, type RunningWorker } from "../../src/jobs/bullmq-worker.js";
import type { JobDeps } from "../../src/jobs/deps.js";
import { planSlots, SlotPool, type DeviceSlot } from "../../src/jobs/gpu-slots.js";
import { queueName, redisConnection } from "../../src/jobs/queues.js";
import { simulatedGpus } from "../../src/jobs/simulated-gpus.js";

// Routing between workers of different capacity (issue 54 item 2), on the real Redis: a worker with one simulated
// GPU (one GPU slot, one CPU slot) and a CPU-only worker (two CPU slots), each a real BullMQ consumer pair with its
// heartbeat in the registry, and the API's dispatcher. The job body is replaced by one that records which worker
// and slot it got and waits to be let go, so the test sees the placement decisions alone; the same workers as real
// `./builder worker` processes training real models are in workers-cluster.test.ts.

const started: Array<{ uuid: string; worker: string; slot: DeviceSlot }> = [];
const finish = new Map<string, () => void>();
vi.mock("../../src/jobs/experiment-job.js", () => ({
  runExperimentJob: (deps: JobDeps, uuid: string, _stop: AbortSignal, slot: DeviceSlot) =>
    new Promise((resolve) => {
      started.push({ uuid, worker: deps.runnerId, slot });
      finish.set(uuid, () => resolve("finished"));
    }),
}));

const kindOf = (id: string) => (id.startsWith("v") ? "vision_classification" : "tabular");
const repo = {
  byId: async (id: string) => ({ id, study: { kind: kindOf(id) } }),
  unfinished: async () => [],
} as unknown as ExperimentRepository;

/** uuid -> "worker/gpu" or "worker/cpu". */
const placed = () => Object.fromEntries(started.map((s) => [s.uuid, `${s.worker}/${s.slot.device === "cuda" ? "gpu" : "cpu"}`]));

async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${JSON.stringify(placed())}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!process.env.TEST_REDIS_URL)("routing jobs between workers of different capacity (real Redis)", () => {
  const base = () => `routing-test-${randomBytes(4).toString("hex")}`;
  const opened: Array<{ stop(): Promise<void> }> = [];
  let bases: string[] = [];

  function deps(queue: string, runnerId: string): JobDeps {
    return {
      config: parseConfig({ REDIS_URL: process.env.TEST_REDIS_URL!, BULLMQ_QUEUE: queue, JOB_LEASE_S: "3" }),
      repo,
      bucket: {} as JobDeps["bucket"],
      logger: pino({ level: "silent" }),
      events: new EventEmitter(),
      runnerId,
    };
  }
  async function gpuWorker(queue: string): Promise<RunningWorker> {
    const w = await startBullmqWorker(
      deps(queue, "gpu-worker"),
      new SlotPool(planSlots(simulatedGpus("1x80GB"), { cpus: 4, cpuSlots: 1 })),
    );
    opened.push(w);
    return w;
  }
  async function cpuWorker(queue: string): Promise<RunningWorker> {
    const w = await startBullmqWorker(deps(queue, "cpu-worker"), new SlotPool(planSlots([], { slots: 2, cpus: 4 })));
    opened.push(w);
    return w;
  }
  function dispatcher(queue: string): BullmqDispatcher {
    const d = new BullmqDispatcher(deps(queue, "api"));
    opened.push(d);
    return d;
  }

  afterEach(async () => {
    for (const f of finish.values()) f();
    for (const o of opened.splice(0).reverse()) await o.stop();
    const redis = redisConnection(process.env.TEST_REDIS_URL!);
    for (const b of bases) {
      const keys = [
        ...(await redis.keys(`bull:${queueName(b, "gpu")}:*`)),
        ...(await redis.keys(`bull:${queueName(b, "cpu")}:*`)),
        `builder:${b}:workers`,
        `builder:${b}:drain`,
      ];
      await redis.del(...keys);
    }
    await redis.quit();
    bases = [];
    started.length = 0;
    finish.clear();
  });

  it("a GPU-needing job goes to the GPU worker and waits for its GPU while CPU slots are free; tables take CPU slots only", async () => {
    const q = base();
    bases.push(q);
    await gpuWorker(q);
    await cpuWorker(q);
    const api = dispatcher(q);
    for (const id of ["v1", "t1", "t2"]) await api.enqueue(id);
    await until(() => started.length === 3);
    expect(placed().v1).toBe("gpu-worker/gpu");
    expect(placed().t1).toMatch(/\/cpu$/); // no tabular job holds the GPU
    expect(placed().t2).toMatch(/\/cpu$/);

    await api.enqueue("v2");
    await sleep(1500);
    // The CPU worker has a slot free, but v2 needs a GPU: it waits in the GPU queue for the GPU worker's.
    expect(placed().v2).toBeUndefined();
    expect(await api.queues.gpu.getJobState("v2")).toBe("waiting");
    expect((await api.depths()).find((d) => d.need === "gpu")).toEqual({ need: "gpu", waiting: 1, active: 1 });
    finish.get("v1")!();
    await until(() => started.length === 4);
    expect(placed().v2).toBe("gpu-worker/gpu");

    // What each registered, and how a worker that stops beating is listed a lease later (its jobs are taken over).
    const listed = (await api.registry.list()).sort((a, b) => a.id.localeCompare(b.id));
    expect(listed.map((w) => [w.id, w.status, w.gpus.length, w.queues])).toEqual([
      ["cpu-worker", "active", 0, ["cpu"]],
      ["gpu-worker", "active", 1, ["gpu", "cpu"]],
    ]);
    expect((await api.registry.list(Date.now() + 3500)).map((w) => w.status)).toEqual(["lost", "lost"]);
  });

  it("a GPU host without CPU slots lends a GPU slot to a table only while no CPU worker has a slot free", async () => {
    const q = base();
    bases.push(q);
    const lender = await startBullmqWorker(deps(q, "gpu-worker"), new SlotPool(planSlots(simulatedGpus("2"), { cpus: 4, cpuSlots: 0 })));
    opened.push(lender);
    expect(lender.consumes).toEqual([
      { need: "gpu", concurrency: 2 },
      { need: "cpu", concurrency: 2 },
    ]);
    await cpuWorker(q);
    const api = dispatcher(q);
    for (const id of ["t1", "t2"]) await api.enqueue(id);
    await until(() => started.length === 2);
    // Whichever worker BullMQ offered them to, both run on the CPU worker while it has slots free.
    expect(placed()).toEqual({ t1: "cpu-worker/cpu", t2: "cpu-worker/cpu" });
    await sleep(1100); // the CPU worker's next heartbeat says its slots are taken
    await api.enqueue("t3");
    await until(() => started.length === 3);
    expect(placed().t3).toBe("gpu-worker/gpu");
  });

  it("a drained worker finishes what it runs and takes nothing new, even with slots free; resumed, it takes jobs again", async () => {
    const q = base();
    bases.push(q);
    await gpuWorker(q);
    const cpu = await cpuWorker(q);
    const api = dispatcher(q);
    for (const id of ["t1", "t2", "t3"]) await api.enqueue(id); // three CPU slots in the cluster: all taken
    await until(() => started.length === 3);
    const onCpuWorker = started.filter((s) => s.worker === "cpu-worker").map((s) => s.uuid);
    const onGpuWorker = started.filter((s) => s.worker === "gpu-worker").map((s) => s.uuid);
    expect(onCpuWorker).toHaveLength(2);

    expect(await api.registry.drain("cpu-worker")).toHaveLength(1);
    await until(() => cpu.state() === "draining");
    finish.get(onCpuWorker[0])!(); // the drained worker now has a free slot
    await api.enqueue("t4");
    await sleep(2500);
    expect(placed().t4).toBeUndefined(); // not taken by the draining worker
    expect(cpu.state()).toBe("draining"); // it still runs its other job
    finish.get(onGpuWorker[0])!();
    await until(() => placed().t4 !== undefined);
    expect(placed().t4).toBe("gpu-worker/cpu");

    finish.get(onCpuWorker[1])!();
    await until(async () => (await api.registry.list()).find((w) => w.id === "cpu-worker")?.status === "drained");
    await api.registry.resume("cpu-worker");
    await until(() => cpu.state() === "active");
    await api.enqueue("t5");
    await until(() => placed().t5 !== undefined);
    expect(placed().t5).toBe("cpu-worker/cpu");
  });

  it("a cluster without GPUs trains image jobs on its CPU workers; once a GPU worker registers, they go to it", async () => {
    const q = base();
    bases.push(q);
    const api = dispatcher(q);
    await cpuWorker(q);
    await api.enqueue("v1");
    await until(() => started.length === 1);
    expect(placed().v1).toBe("cpu-worker/cpu");
    await gpuWorker(q);
    await sleep(1100); // past the dispatcher's one-second routing cache
    await api.enqueue("v2");
    await until(() => started.length === 2);
    expect(placed().v2).toBe("gpu-worker/gpu");
  });

  it("an image job queued for the CPUs before the first GPU worker came is moved to the GPU queue by the next sweep", async () => {
    const q = base();
    bases.push(q);
    const api = dispatcher(q);
    const cpu = await cpuWorker(q);
    await api.registry.drain("cpu-worker"); // keeps the job waiting in the CPU queue
    await until(() => cpu.state() !== "active");
    await api.enqueue("v1");
    // A fetch the CPU consumer had already waiting on Redis when the drain came may still take the job for a moment;
    // the drained worker hands it straight back (bullmq-worker.ts), so the job settles in the CPU queue's wait list.
    await until(async () => (await api.queues.cpu.getJobState("v1")) === "waiting");
    expect(started).toEqual([]);
    await gpuWorker(q);
    await sleep(1100);
    await api.enqueue("v1"); // what the sweep does for every queued experiment
    await until(() => started.length === 1);
    expect(placed().v1).toBe("gpu-worker/gpu");
    expect(await api.queues.cpu.getJob("v1")).toBeUndefined();
  });
});
