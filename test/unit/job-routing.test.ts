import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";
import { planSlots, SlotPool, slotEnv, trainingDevice } from "../../src/jobs/gpu-slots.js";
import { kindOf, queueName, routeOf } from "../../src/jobs/queues.js";
import { simulatedGpus } from "../../src/jobs/simulated-gpus.js";

// What a job needs and where it may go (issue 54 item 2), and the simulated GPUs that let the routing be tested on
// hosts without one. The routing between real workers: test/integration/job-routing.test.ts.

describe("what a job needs", () => {
  const vision = { study: { kind: "vision_classification" } };
  const detection = { study: { kind: "detection" } };
  const table = { study: { kind: "tabular" } };

  it("tables need a CPU; images a GPU while the cluster has a GPU worker, a CPU otherwise", () => {
    expect(routeOf(table, true)).toBe("cpu");
    expect(routeOf(table, false)).toBe("cpu");
    expect(routeOf(vision, true)).toBe("gpu");
    expect(routeOf(detection, true)).toBe("gpu");
    expect(routeOf(vision, false)).toBe("cpu"); // a CPU-only cluster still trains image models
  });

  it("reads rows from before studies by their request's task", () => {
    expect(routeOf({ study: null, request: { task: "data" } }, true)).toBe("cpu");
    expect(routeOf({ study: null, request: { task: "vision" } }, true)).toBe("gpu");
    expect(kindOf({ study: null, request: { task: "vision" } })).toBe("vision");
    expect(kindOf(table)).toBe("tabular");
  });

  it("names one queue per need beside BULLMQ_QUEUE", () => {
    expect(queueName("builder-experiments", "gpu")).toBe("builder-experiments-gpu");
    expect(queueName("builder-experiments", "cpu")).toBe("builder-experiments-cpu");
  });
});

describe("simulated GPUs (BUILDER_SIMULATE_GPUS)", () => {
  it("declares a count, with each GPU's memory when given", () => {
    expect(simulatedGpus("2").map((g) => [g.index, g.memoryMiB, g.simulated])).toEqual([
      ["0", null, true],
      ["1", null, true],
    ]);
    expect(simulatedGpus("1x80GB")[0].memoryMiB).toBe(81920);
    expect(simulatedGpus("1x24GiB")[0].memoryMiB).toBe(24576);
    expect(simulatedGpus("1x40960MiB")[0].memoryMiB).toBe(40960);
    expect(() => simulatedGpus("two")).toThrow(/BUILDER_SIMULATE_GPUS must be a count/);
  });

  it("is refused at start when malformed, with the variable named", () => {
    expect(() => parseConfig({ BUILDER_SIMULATE_GPUS: "1 x eighty" })).toThrow(ConfigError);
    expect(() => parseConfig({ BUILDER_SIMULATE_GPUS: "1 x eighty" })).toThrow(/BUILDER_SIMULATE_GPUS/);
    expect(parseConfig({ BUILDER_SIMULATE_GPUS: "2x80GB" }).BUILDER_SIMULATE_GPUS).toBe("2x80GB");
  });

  it("makes GPU slots for placement whose jobs train on the CPU with every real GPU hidden", () => {
    const pool = new SlotPool(planSlots(simulatedGpus("1x80GB"), { cpus: 4, cpuSlots: 1 }));
    const [gpu, cpu] = pool.slots;
    expect(gpu.device).toBe("cuda");
    expect(trainingDevice(gpu)).toBe("cpu");
    expect(slotEnv(gpu).CUDA_VISIBLE_DEVICES).toBe("");
    expect(trainingDevice(cpu)).toBe("cpu");
    expect(pool.count("cuda")).toBe(1);
    expect(pool.count("cpu")).toBe(1);
  });
});

describe("what runs in each slot", () => {
  it("is told to the Operations page only, never to the readiness probes anyone may call", () => {
    const pool = new SlotPool(planSlots([], { slots: 2, cpus: 4 }));
    const slot = pool.tryAcquire("cpu", "experiment-uuid")!;
    expect(pool.describe({ holders: true })[0]).toMatchObject({ busy: true, experiment: "experiment-uuid", since: expect.any(String) });
    expect(pool.describe()[0]).not.toHaveProperty("experiment");
    pool.release(slot);
    expect(pool.describe({ holders: true })[0]).not.toHaveProperty("experiment");
  });

  it("follows a slot handed to a waiting job", async () => {
    const pool = new SlotPool(planSlots([], { slots: 1, cpus: 2 }));
    const first = pool.tryAcquire("cpu", "a")!;
    const waiting = pool.acquireWhenFree("cpu", undefined, "b");
    expect(pool.waiting()).toEqual({ gpu: 0, cpu: 1 });
    pool.release(first);
    await waiting;
    expect(pool.describe({ holders: true })[0]).toMatchObject({ experiment: "b" });
  });
});
