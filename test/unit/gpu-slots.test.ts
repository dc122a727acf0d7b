import { describe, expect, it } from "vitest";
import { detectGpus, parseNvidiaSmi, planSlots, slotEnv, SlotPool, deviceSlotPool } from "../../src/jobs/gpu-slots.js";

// GPUs are faked by configuration: the text nvidia-smi prints for
// `--query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits` on a two-GPU host.
// No GPU on these machines: the CUDA path itself (a job really training on the pinned GPU) is untested here.
const TWO_GPUS = [
  "0, GPU-6f1a2b3c-0000-1111-2222-333344445555, NVIDIA H100 80GB HBM3, 81559",
  "1, GPU-9e8d7c6b-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA H100 80GB HBM3, 81559",
  "",
].join("\n");
const smi = (out: string | null) => () => out;

describe("nvidia-smi parsing and visibility", () => {
  it("reads index, UUID, name and memory of each GPU", () => {
    expect(parseNvidiaSmi(TWO_GPUS)).toEqual([
      { index: "0", id: "GPU-6f1a2b3c-0000-1111-2222-333344445555", name: "NVIDIA H100 80GB HBM3", memoryMiB: 81559 },
      { index: "1", id: "GPU-9e8d7c6b-aaaa-bbbb-cccc-ddddeeeeffff", name: "NVIDIA H100 80GB HBM3", memoryMiB: 81559 },
    ]);
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
    expect(slotEnv(slots[1]!)).toEqual({ CUDA_VISIBLE_DEVICES: gpus[1]!.id, OMP_NUM_THREADS: "8", MKL_NUM_THREADS: "8", OPENBLAS_NUM_THREADS: "8" });
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
    expect(pool.describe()[0]).toMatchObject({ device: "cuda", gpu: { index: "1", name: "NVIDIA H100 80GB HBM3", memory_mib: 81559 }, busy: false });
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
