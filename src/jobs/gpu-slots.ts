import { execFileSync } from "node:child_process";
import os from "node:os";

/** One GPU as nvidia-smi lists it. `id` is what CUDA_VISIBLE_DEVICES takes (the UUID when known: stable across reboots). */
export interface Gpu {
  index: string;
  id: string;
  name: string;
  memoryMiB: number | null;
}

/** Where one concurrent training job runs: a GPU (pinned with CUDA_VISIBLE_DEVICES) or the CPU, and its CPU threads. */
export interface DeviceSlot {
  slot: number;
  device: "cuda" | "cpu";
  gpu: Gpu | null;
  threads: number;
}

export const NVIDIA_SMI_QUERY = ["--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits"];

/** Parses `nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits`. */
export function parseNvidiaSmi(csv: string): Gpu[] {
  const gpus: Gpu[] = [];
  for (const line of csv.split("\n")) {
    const cells = line.split(",").map((c) => c.trim());
    if (cells.length < 4 || !/^\d+$/.test(cells[0]!)) continue;
    const [index, uuid, name, memory] = cells as [string, string, string, string];
    const mib = Number(memory);
    gpus.push({ index, id: uuid || index, name, memoryMiB: Number.isFinite(mib) ? mib : null });
  }
  return gpus;
}

/** nvidia-smi's output, or null where there is no driver (no binary, or it fails: a container without the runtime). */
export function runNvidiaSmi(): string | null {
  try {
    return execFileSync("nvidia-smi", NVIDIA_SMI_QUERY, { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

/**
 * The GPUs this process may use. CUDA_VISIBLE_DEVICES, when set, narrows the list the driver reports (by index
 * or UUID), as CUDA itself would; set to "" or "-1" it hides every GPU. A container given GPUs by the NVIDIA
 * runtime sees only those in nvidia-smi.
 */
export function detectGpus(env: NodeJS.ProcessEnv = process.env, smi: () => string | null = runNvidiaSmi): Gpu[] {
  const visible = env.CUDA_VISIBLE_DEVICES;
  if (visible !== undefined && (visible.trim() === "" || visible.trim() === "-1")) return [];
  const output = smi();
  const all = output === null ? [] : parseNvidiaSmi(output);
  if (visible === undefined) return all;
  const wanted = visible.split(",").map((v) => v.trim()).filter(Boolean);
  return wanted.flatMap((w) => all.filter((g) => g.index === w || g.id === w || g.id.startsWith(w)).slice(0, 1));
}

/**
 * The slots of a runner: `slots` (BUILDER_GPU_SLOTS) when set, else one per GPU, else one CPU slot. Slots
 * beyond the GPU count share GPUs round-robin (small models fit two to a GPU). The host's CPU threads are split
 * between the slots, so concurrent jobs do not oversubscribe the cores (OpenMP spin-waits then cost 10x).
 */
export function planSlots(gpus: Gpu[], opts: { slots?: number; cpus?: number } = {}): DeviceSlot[] {
  const count = opts.slots ?? Math.max(1, gpus.length);
  const threads = Math.max(1, Math.floor((opts.cpus ?? os.availableParallelism()) / count));
  return Array.from({ length: count }, (_, slot) => {
    const gpu = gpus.length ? gpus[slot % gpus.length]! : null;
    return { slot, device: gpu ? "cuda" : "cpu", gpu, threads };
  });
}

/**
 * The environment of the pipeline process in a slot: pinned to its GPU (CUDA_VISIBLE_DEVICES; the job sees it as
 * cuda:0), or with every GPU hidden on a CPU slot, and thread pools sized to the slot's share of the cores.
 */
export function slotEnv(slot: DeviceSlot): Record<string, string> {
  const threads = String(slot.threads);
  return {
    CUDA_VISIBLE_DEVICES: slot.gpu ? slot.gpu.id : "",
    OMP_NUM_THREADS: threads,
    MKL_NUM_THREADS: threads,
    OPENBLAS_NUM_THREADS: threads,
  };
}

/** Hands each running job a free slot; the runner's concurrency equals the slot count, so one is always free. */
export class SlotPool {
  private readonly free: DeviceSlot[];

  constructor(readonly slots: readonly DeviceSlot[]) {
    this.free = [...slots];
  }

  get size(): number {
    return this.slots.length;
  }

  acquire(): DeviceSlot {
    const slot = this.free.shift();
    if (!slot) throw new Error(`all ${this.slots.length} device slots are busy: the runner's concurrency must equal the slot count`);
    return slot;
  }

  release(slot: DeviceSlot): void {
    if (!this.free.includes(slot)) this.free.push(slot);
    this.free.sort((a, b) => a.slot - b.slot);
  }

  /** What /readyz and the worker's /readyz report: the devices a runner sees and how jobs are placed on them. */
  describe() {
    return this.slots.map((s) => ({ slot: s.slot, device: s.device, gpu: s.gpu ? { index: s.gpu.index, id: s.gpu.id, name: s.gpu.name, memory_mib: s.gpu.memoryMiB } : null, threads: s.threads, busy: !this.free.includes(s) }));
  }
}

/** The slot pool of this process, from the environment and nvidia-smi. */
export function deviceSlotPool(slots: number | undefined, env: NodeJS.ProcessEnv = process.env, smi?: () => string | null): SlotPool {
  return new SlotPool(planSlots(detectGpus(env, smi), { slots }));
}
