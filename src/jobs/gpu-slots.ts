import { execFileSync } from "node:child_process";
import os from "node:os";

/** One GPU as nvidia-smi lists it. `id` is what CUDA_VISIBLE_DEVICES takes (the UUID when known: stable across reboots). */
export interface Gpu {
  index: string;
  id: string;
  name: string;
  memoryMiB: number | null;
  /** Declared with BUILDER_SIMULATE_GPUS (tests of routing on a host without one): counted as a GPU, trains on the CPU. */
  simulated?: boolean;
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
    if (cells.length < 4 || !/^\d+$/.test(cells[0])) continue;
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
  const wanted = visible
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
  return wanted.flatMap((w) => all.filter((g) => g.index === w || g.id === w || g.id.startsWith(w)).slice(0, 1));
}

/**
 * What a job needs from a slot. Vision and detection train on a GPU where the host has one; tabular jobs
 * (LightGBM) never use a GPU, so on a GPU host they run in CPU slots of their own instead of holding a GPU.
 */
export type SlotNeed = "gpu" | "cpu";

/**
 * The slots of a runner: `slots` (BUILDER_GPU_SLOTS) when set, else one per GPU, else one CPU slot. Slots
 * beyond the GPU count share GPUs round-robin (small models fit two to a GPU). On a host with GPUs, `cpuSlots`
 * (BUILDER_CPU_SLOTS) CPU-only slots follow them for the jobs that need no GPU; without GPUs every slot is a
 * CPU slot already and `cpuSlots` adds none. The host's CPU threads are split between all the slots, so
 * concurrent jobs do not oversubscribe the cores (OpenMP spin-waits then cost 10x).
 */
export function planSlots(gpus: Gpu[], opts: { slots?: number; cpus?: number; cpuSlots?: number } = {}): DeviceSlot[] {
  const count = opts.slots ?? Math.max(1, gpus.length);
  const cpuOnly = gpus.length ? (opts.cpuSlots ?? 0) : 0;
  const threads = Math.max(1, Math.floor((opts.cpus ?? os.availableParallelism()) / (count + cpuOnly)));
  return Array.from({ length: count + cpuOnly }, (_, slot) => {
    const gpu = gpus.length && slot < count ? gpus[slot % gpus.length] : null;
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
    CUDA_VISIBLE_DEVICES: slot.gpu && !slot.gpu.simulated ? slot.gpu.id : "",
    OMP_NUM_THREADS: threads,
    MKL_NUM_THREADS: threads,
    OPENBLAS_NUM_THREADS: threads,
  };
}

/** The device the pipeline in a slot trains on: a simulated GPU's slot is a GPU slot for placement, but its job runs on the CPU. */
export function trainingDevice(slot: DeviceSlot): "cuda" | "cpu" {
  return slot.gpu?.simulated ? "cpu" : slot.device;
}

/**
 * Hands each running job a free slot of the kind it needs (see `fits`). `acquire` takes one at once or throws;
 * `tryAcquire` answers null (the BullMQ worker then hands the job back to the queue for another worker);
 * `acquireWhenFree` waits in line (the in-process runner, the only runner in its process).
 */
export class SlotPool {
  private readonly free: DeviceSlot[];
  private readonly waiters: Array<{ need: SlotNeed; holder?: string; resolve: (slot: DeviceSlot) => void }> = [];
  /** Which experiment runs in each busy slot, and since when (the Operations page and the worker registry show it). */
  private readonly holders = new Map<DeviceSlot, { experiment: string; since: Date }>();
  private readonly hasGpu: boolean;
  private readonly hasCpuOnly: boolean;

  constructor(readonly slots: readonly DeviceSlot[]) {
    this.free = [...slots];
    this.hasGpu = slots.some((s) => s.device === "cuda");
    this.hasCpuOnly = slots.some((s) => s.device === "cpu");
  }

  get size(): number {
    return this.slots.length;
  }

  /** Slots of one device kind: a worker consumes the GPU queue with as many jobs at once as it has GPU slots. */
  count(device: "cuda" | "cpu"): number {
    return this.slots.filter((s) => s.device === device).length;
  }

  /**
   * A GPU job takes a GPU slot wherever the pool has one (a CPU slot would make it crawl: it waits for a GPU);
   * on a host without GPUs, any slot. A CPU job takes a CPU slot wherever the pool has one, so no GPU sits idle
   * under LightGBM; a GPU pool with no CPU slots (BUILDER_CPU_SLOTS=0) lends it a GPU slot, as before they existed.
   */
  fits(slot: DeviceSlot, need: SlotNeed): boolean {
    if (need === "gpu") return !this.hasGpu || slot.device === "cuda";
    return !this.hasCpuOnly || slot.device === "cpu";
  }

  /** Any free slot (need unset), or one that fits `need`; throws when there is none. */
  acquire(need?: SlotNeed, holder?: string): DeviceSlot {
    const slot = need ? this.tryAcquire(need, holder) : (this.free.shift() ?? null);
    if (!slot)
      throw new Error(
        `all ${this.slots.length} device slots ${need ? `for ${need} jobs ` : ""}are busy: the runner's concurrency must equal the slot count`,
      );
    if (!need) this.hold(slot, holder);
    return slot;
  }

  /** `holder`: the experiment that will run in the slot. */
  tryAcquire(need: SlotNeed, holder?: string): DeviceSlot | null {
    const i = this.free.findIndex((s) => this.fits(s, need));
    if (i < 0) return null;
    const slot = this.free.splice(i, 1)[0];
    this.hold(slot, holder);
    return slot;
  }

  /** Resolves with a slot that fits `need` once one is free (first come, first served); rejects when `signal` aborts. */
  acquireWhenFree(need: SlotNeed, signal?: AbortSignal, holder?: string): Promise<DeviceSlot> {
    const now = this.tryAcquire(need, holder);
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const stopped = () => (signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason ?? "aborted")));
      if (signal?.aborted) return reject(stopped());
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(stopped());
      };
      const waiter = {
        need,
        holder,
        resolve: (slot: DeviceSlot) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(slot);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(slot: DeviceSlot): void {
    this.holders.delete(slot);
    const waiter = this.waiters.find((w) => this.fits(slot, w.need));
    if (waiter) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      this.hold(slot, waiter.holder);
      waiter.resolve(slot);
      return;
    }
    if (!this.free.includes(slot)) this.free.push(slot);
    this.free.sort((a, b) => a.slot - b.slot);
  }

  /** Jobs waiting here for a slot, by what they need (the in-process runner's queue). */
  waiting(): Record<SlotNeed, number> {
    return { gpu: this.waiters.filter((w) => w.need === "gpu").length, cpu: this.waiters.filter((w) => w.need === "cpu").length };
  }

  private hold(slot: DeviceSlot, holder: string | undefined): void {
    if (holder) this.holders.set(slot, { experiment: holder, since: new Date() });
  }

  /**
   * What /readyz and the worker's /readyz report: the devices a runner sees and how jobs are placed on them.
   * `holders`: also which experiment runs in each busy slot, for the administrators' Operations page only (the
   * readiness probes answer anyone on the network).
   */
  describe({ holders = false } = {}) {
    return this.slots.map((s) => {
      const held = holders ? this.holders.get(s) : undefined;
      return {
        slot: s.slot,
        device: s.device,
        gpu: s.gpu
          ? {
              index: s.gpu.index,
              id: s.gpu.id,
              name: s.gpu.name,
              memory_mib: s.gpu.memoryMiB,
              ...(s.gpu.simulated ? { simulated: true } : {}),
            }
          : null,
        threads: s.threads,
        busy: !this.free.includes(s),
        ...(held ? { experiment: held.experiment, since: held.since.toISOString() } : {}),
      };
    });
  }
}

/**
 * The slot pool of this process, from the environment and nvidia-smi. `cpuSlots` (BUILDER_CPU_SLOTS, whose
 * default in the configuration is 1) adds CPU-only slots for tabular jobs on a host with GPUs.
 */
export function deviceSlotPool(
  slots: number | undefined,
  env: NodeJS.ProcessEnv = process.env,
  smi?: () => string | null,
  cpuSlots = 0,
  declared?: Gpu[],
): SlotPool {
  return new SlotPool(planSlots(declared?.length ? declared : detectGpus(env, smi), { slots, cpuSlots }));
}

/** What a job needs: tabular jobs (by their study, or by the request of a row from before studies) need no GPU. */
export function slotNeedOf(row: { study?: unknown; request?: unknown }): SlotNeed {
  const kind = (row.study as { kind?: unknown } | null | undefined)?.kind;
  if (kind !== undefined) return kind === "tabular" ? "cpu" : "gpu";
  return (row.request as { task?: unknown } | null | undefined)?.task === "data" ? "cpu" : "gpu";
}
