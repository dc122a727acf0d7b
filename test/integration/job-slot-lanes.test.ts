import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { Queue, type ConnectionOptions } from "bullmq";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config.js";
import type { ExperimentRepository } from "../../src/experiments/repository.js";
import { startBullmqWorker } from "../../src/jobs/bullmq-worker.js";
import { queueName, redisConnection } from "../../src/jobs/queues.js";
import type { JobDeps } from "../../src/jobs/deps.js";
import { parseNvidiaSmi, planSlots, SlotPool, type DeviceSlot } from "../../src/jobs/gpu-slots.js";
import { InProcessRunner } from "../../src/jobs/runner.js";

// Where each job runs when GPU and tabular jobs meet, on a faked two-GPU host with one CPU slot
// (BUILDER_CPU_SLOTS=1). The job itself is replaced by one that records its slot and waits to be let go, so the
// test sees the placement decisions alone; both runners (in-process, and a BullMQ worker on a real Redis) share
// them. No GPU here: nothing trains on a GPU in this test.

const started: Array<{ uuid: string; slot: DeviceSlot }> = [];
const finish = new Map<string, () => void>();
vi.mock("../../src/jobs/experiment-job.js", () => ({
  runExperimentJob: (_deps: unknown, uuid: string, _stop: AbortSignal, slot: DeviceSlot) =>
    new Promise((resolve) => {
      started.push({ uuid, slot });
      finish.set(uuid, () => resolve("finished"));
    }),
}));

const TWO_GPUS = "0, GPU-aaaa, NVIDIA H100, 81559\n1, GPU-bbbb, NVIDIA H100, 81559\n";
const KINDS: Record<string, string> = {
  v1: "vision_classification",
  v2: "detection",
  v3: "vision_classification",
  t1: "tabular",
  t2: "tabular",
};
const repo = {
  byId: async (id: string) => ({ id, study: { kind: KINDS[id] } }),
  unfinished: async () => [],
} as unknown as ExperimentRepository;
const pool = () => new SlotPool(planSlots(parseNvidiaSmi(TWO_GPUS), { cpus: 6, cpuSlots: 1 }));
const placed = () => Object.fromEntries(started.map((s) => [s.uuid, s.slot.gpu ? `gpu${s.slot.gpu.index}` : "cpu"]));

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${JSON.stringify(placed())}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function deps(env: Record<string, string> = {}): JobDeps {
  return {
    config: parseConfig({ ...env }),
    repo,
    bucket: {} as JobDeps["bucket"],
    logger: pino({ level: "silent" }),
    events: new EventEmitter(),
    runnerId: "test",
  };
}

afterEach(() => {
  started.length = 0;
  finish.clear();
});

describe("device slots for GPU and tabular jobs", () => {
  it("in-process runner: tabular jobs run in the CPU slot beside busy GPUs; a third GPU job waits for a GPU", async () => {
    const runner = new InProcessRunner(deps(), pool());
    for (const id of ["v1", "v2", "v3", "t1", "t2"]) await runner.enqueue(id);
    await until(() => started.length === 3);
    expect(placed()).toEqual({ v1: "gpu0", v2: "gpu1", t1: "cpu" }); // v3 waits for a GPU, t2 for the CPU slot
    finish.get("t1")!();
    await until(() => started.length === 4);
    expect(placed().t2).toBe("cpu"); // the freed CPU slot went to the tabular job, not to the waiting vision job
    finish.get("v2")!();
    await until(() => started.length === 5);
    expect(placed().v3).toBe("gpu1");
    for (const f of finish.values()) f();
    await runner.stop();
  });

  describe.skipIf(!process.env.TEST_REDIS_URL)("BullMQ worker (real Redis)", () => {
    it("takes as many GPU jobs as GPU slots and CPU jobs as CPU slots; a third GPU job waits in its queue until a GPU frees", async () => {
      const base = `lanes-test-${randomBytes(4).toString("hex")}`;
      const d = deps({ REDIS_URL: process.env.TEST_REDIS_URL!, BULLMQ_QUEUE: base, JOB_LEASE_S: "5" });
      const connection = redisConnection(process.env.TEST_REDIS_URL!);
      const gpuQueue = new Queue(queueName(base, "gpu"), { connection: connection as ConnectionOptions });
      const cpuQueue = new Queue(queueName(base, "cpu"), { connection: connection as ConnectionOptions });
      const w = await startBullmqWorker(d, pool());
      try {
        for (const id of ["v1", "v2", "v3"])
          await gpuQueue.add("experiment", { experimentUuid: id, need: "gpu", kind: KINDS[id] }, { jobId: id, removeOnComplete: true });
        await cpuQueue.add("experiment", { experimentUuid: "t1", need: "cpu", kind: "tabular" }, { jobId: "t1", removeOnComplete: true });
        await until(() => started.length === 3);
        expect(placed()).toEqual({ v1: "gpu0", v2: "gpu1", t1: "cpu" });
        expect(await gpuQueue.getJobState("v3")).toBe("waiting"); // not taken: this worker has no GPU slot free
        finish.get("v1")!();
        await until(() => started.length === 4);
        expect(placed().v3).toBe("gpu0");
        for (const f of finish.values()) f();
      } finally {
        await w.stop();
        for (const q of [gpuQueue, cpuQueue]) {
          await q.obliterate({ force: true }).catch(() => undefined);
          await q.close();
        }
        await connection.del(`builder:${base}:workers`, `builder:${base}:drain`);
        connection.disconnect();
      }
    });
  });
});
