import { describe, expect, it } from "vitest";
import { detectGpus, parseNvidiaSmi, planSlots, slotEnv, slotNeedOf, SlotPool, deviceSlotPool } from "../../src/jobs/gpu-slots.js";

// GPUs are faked by configuration: the text nvidia-smi prints for
// `--query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits` on a two-GPU host.
// No GPU on these machines, so the CUDA path itself (a job training on the pinned GPU) is not run by this suite; it
// was checked by hand on a lent H100 (2026-11-25): torch saw the GPU pinned by its UUID and the pipeline tests passed
// on it (pipelines/tests/device_choice.py). REAL_H100 is that host's nvidia-smi output, byte for byte.
const TWO_GPUS = [
  "0, GPU-6f1a2b3c-0000-1111-2222-333344445555, NVIDIA H100 80GB HBM3, 81559",
  "1, GPU-9e8d7c6b-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA H100 80GB HBM3, 81559",
  "",
].join("\n");
const REAL_H100 = "0, GPU-48b8482f-b171-88bf-ebad-8285a148e13f, NVIDIA H100 80GB HBM3, 81559\n";
const smi = (out: string | null) => () => out;

describe("nvidia-smi parsing and visibility", () => {
  it("reads index, UUID, name and memory of each GPU", () => {
    expect(parseNvidiaSmi(TWO_GPUS)).toEqual([
      { index: "0", id: "GPU-6f1a2b3c-0000-1111-2222-333344445555", name: "NVIDIA H100 80GB HBM3", memoryMiB: 81559 },
      { index: "1", id: "GPU-9e8d7c6b-aaaa-bbbb-cccc-ddddeeeeffff", name: "NVIDIA H100 80GB HBM3", memoryMiB: 81559 },
    ]);
  });

  it("reads a real H100 host's output, and its UUID pins the one slot", () => {
    const gpus = detectGpus({}, smi(REAL_H100));
    expect(gpus).toEqual([{ index: "0", id: "GPU-48b8482f-b171-88bf-ebad-8285a148e13f", name: "NVIDIA H100 80GB HBM3", memoryMiB: 81559 }]);
    const [slot] = planSlots(gpus, { cpus: 16 });
    expect(slotEnv(slot).CUDA_VISIBLE_DEVICES).toBe("GPU-48b8482f-b171-88bf-ebad-8285a148e13f");
  });

  it("skips lines that are not GPUs (a driver error message) and reads [N/A] memory as unknown", () => {
    const out = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n0, GPU-x, Tesla T4, [N/A]\n";
    expect(parseNvidiaSmi(out)).toEqual([{ index: "0", id: "GPU-x", name: "Tesla T4", memoryMiB: null }]);
  });

  it("no nvidia-smi (or it fails): no GPUs", () => {
    expect(detectGpus({}, smi(null))).toEqual([]);
  });

  it("CUDA_VISIBLE_DEVICES narrows the list by index or UUID prefix, and '' or -1 hides every GPU", () => {
    expect(detectGpus({}, smi(TWO_GPUS)).map((g) => g.index)).toEqual(["0", "1"]);
    expect(detectGpus({ CUDA_VISIBLE_DEVICES: "1" }, smi(TWO_GPUS)).map((g) => g.index)).toEqual(["1"]);
    expect(detectGpus({ CUDA_VISIBLE_DEVICES: "GPU-9e8d" }, smi(TWO_GPUS)).map((g) => g.index)).toEqual(["1"]);
    expect(detectGpus({ CUDA_VISIBLE_DEVICES: "1,0" }, smi(TWO_GPUS)).map((g) => g.index)).toEqual(["1", "0"]);
    expect(detectGpus({ CUDA_VISIBLE_DEVICES: "" }, smi(TWO_GPUS))).toEqual([]);
    expect(detectGpus({ CUDA_VISIBLE_DEVICES: "-1" }, smi(TWO_GPUS))).toEqual([]);
  });
});

describe("slot assignment", () => {
  const gpus = parseNvidiaSmi(TWO_GPUS);

  it("one slot per GPU by default, each pinned to its own GPU, the cores split between them", () => {
    const slots = planSlots(gpus, { cpus: 16 });
    expect(slots.map((s) => [s.device, s.gpu?.index, s.threads])).toEqual([
      ["cuda", "0", 8],
      ["cuda", "1", 8],
    ]);
    expect(slotEnv(slots[1]!)).toEqual({
      CUDA_VISIBLE_DEVICES: gpus[1]!.id,
      OMP_NUM_THREADS: "8",
      MKL_NUM_THREADS: "8",
      OPENBLAS_NUM_THREADS: "8",
    });
  });

  it("BUILDER_GPU_SLOTS beyond the GPU count shares the GPUs round-robin", () => {
    const slots = planSlots(gpus, { slots: 3, cpus: 16 });
    expect(slots.map((s) => s.gpu?.index)).toEqual(["0", "1", "0"]);
    expect(slots.every((s) => s.threads === 5)).toBe(true);
  });

  it("no GPU: one CPU slot with every core, and its process sees no GPU", () => {
    const slots = planSlots([], { cpus: 2 });
    expect(slots).toEqual([{ slot: 0, device: "cpu", gpu: null, threads: 2 }]);
    expect(slotEnv(slots[0]!).CUDA_VISIBLE_DEVICES).toBe("");
  });

  it("more CPU slots than cores still gives each job one thread", () => {
    expect(planSlots([], { slots: 4, cpus: 2 }).map((s) => s.threads)).toEqual([1, 1, 1, 1]);
  });

  it("deviceSlotPool reads the environment and nvidia-smi", () => {
    const pool = deviceSlotPool(undefined, { CUDA_VISIBLE_DEVICES: "1" }, smi(TWO_GPUS));
    expect(pool.size).toBe(1);
    expect(pool.describe()[0]).toMatchObject({
      device: "cuda",
      gpu: { index: "1", name: "NVIDIA H100 80GB HBM3", memory_mib: 81559 },
      busy: false,
    });
  });
});

describe("SlotPool", () => {
  it("hands out distinct slots, marks them busy, and takes them back", () => {
    const pool = new SlotPool(planSlots(parseNvidiaSmi(TWO_GPUS), { cpus: 4 }));
    const a = pool.acquire();
    const b = pool.acquire();
    expect(a.gpu?.index).not.toBe(b.gpu?.index);
    expect(pool.describe().map((s) => s.busy)).toEqual([true, true]);
    expect(() => pool.acquire()).toThrow(/all 2 device slots are busy/);
    pool.release(a);
    expect(pool.describe().map((s) => s.busy)).toEqual([false, true]);
    expect(pool.acquire()).toBe(a);
  });
});

describe("tabular jobs beside GPU jobs (BUILDER_CPU_SLOTS)", () => {
  const gpus = parseNvidiaSmi(TWO_GPUS);

  it("a GPU host gets its CPU-only slots after the GPU slots, and the cores are split over all of them", () => {
    const slots = planSlots(gpus, { cpus: 16, cpuSlots: 1 });
    expect(slots.map((s) => [s.slot, s.device, s.gpu?.index ?? null, s.threads])).toEqual([
      [0, "cuda", "0", 5],
      [1, "cuda", "1", 5],
      [2, "cpu", null, 5],
    ]);
    expect(slotEnv(slots[2]!).CUDA_VISIBLE_DEVICES).toBe(""); // the tabular job sees no GPU at all
  });

  it("without a GPU cpuSlots adds nothing: every slot is a CPU slot already", () => {
    expect(planSlots([], { cpus: 2, cpuSlots: 1 })).toEqual([{ slot: 0, device: "cpu", gpu: null, threads: 2 }]);
  });

  it("a tabular job takes the CPU slot, never a GPU, even with both GPUs free", () => {
    const pool = new SlotPool(planSlots(gpus, { cpus: 16, cpuSlots: 1 }));
    expect(pool.tryAcquire("cpu")).toMatchObject({ device: "cpu", gpu: null });
    expect(pool.tryAcquire("cpu")).toBeNull(); // a second one waits for the CPU slot, not for a GPU
    expect(pool.describe().map((s) => s.busy)).toEqual([false, false, true]);
  });

  it("vision and detection jobs take GPUs only: a third one waits although the CPU slot is free", () => {
    const pool = new SlotPool(planSlots(gpus, { cpus: 16, cpuSlots: 1 }));
    expect([pool.tryAcquire("gpu")?.gpu?.index, pool.tryAcquire("gpu")?.gpu?.index]).toEqual(["0", "1"]);
    expect(pool.tryAcquire("gpu")).toBeNull();
    expect(pool.tryAcquire("cpu")?.device).toBe("cpu"); // and a tabular job still starts at once
  });

  it("BUILDER_CPU_SLOTS=0 on a GPU host: a tabular job borrows a free GPU slot, as before", () => {
    const pool = new SlotPool(planSlots(gpus, { cpus: 16, cpuSlots: 0 }));
    expect(pool.tryAcquire("cpu")?.device).toBe("cuda");
  });

  it("without a GPU both kinds share the CPU slots", () => {
    const pool = new SlotPool(planSlots([], { slots: 2, cpus: 2 }));
    expect(pool.tryAcquire("gpu")?.device).toBe("cpu");
    expect(pool.tryAcquire("cpu")?.device).toBe("cpu");
    expect(pool.tryAcquire("cpu")).toBeNull();
  });

  it("waiters get a released slot only if it fits them, first come first served, and leave on abort", async () => {
    const pool = new SlotPool(planSlots(gpus, { cpus: 16, cpuSlots: 1 }));
    const g0 = pool.acquire("gpu");
    pool.acquire("gpu");
    const cpu = pool.acquire("cpu");
    const order: string[] = [];
    const aborted = new AbortController();
    const gone = pool.acquireWhenFree("gpu", aborted.signal).catch((e: Error) => `rejected: ${e.message}`);
    const visionWait = pool.acquireWhenFree("gpu").then((s) => (order.push(`vision on ${s.device}`), s));
    const tabularWait = pool.acquireWhenFree("cpu").then((s) => (order.push(`tabular on ${s.device}`), s));
    aborted.abort(new Error("cancelled"));
    expect(await gone).toBe("rejected: cancelled");
    pool.release(cpu); // fits only the tabular waiter
    await tabularWait;
    expect(order).toEqual(["tabular on cpu"]);
    pool.release(g0); // the aborted waiter is gone: the vision waiter gets it
    expect((await visionWait).gpu?.index).toBe("0");
    expect(order).toEqual(["tabular on cpu", "vision on cuda"]);
  });

  it("deviceSlotPool adds the CPU slots it is given on a GPU host", () => {
    const pool = deviceSlotPool(undefined, {}, smi(TWO_GPUS), 1);
    expect(pool.describe().map((s) => s.device)).toEqual(["cuda", "cuda", "cpu"]);
  });

  it("what a job needs: tabular by its study (or its request on old rows) needs the CPU; the rest a GPU", () => {
    expect(slotNeedOf({ study: { kind: "tabular" } })).toBe("cpu");
    expect(slotNeedOf({ study: { kind: "vision_classification" } })).toBe("gpu");
    expect(slotNeedOf({ study: { kind: "detection" } })).toBe("gpu");
    expect(slotNeedOf({ study: null, request: { task: "data" } })).toBe("cpu");
    expect(slotNeedOf({ study: null, request: { task: "vision" } })).toBe("gpu");
  });
});
