import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { ExperimentRepository } from "../experiments/repository.js";
import type { JobDeps } from "./deps.js";
import { runExperimentJob } from "./experiment-job.js";
import { deviceSlotPool, slotNeedOf, type SlotPool } from "./gpu-slots.js";

/** What the API needs from whichever runner is configured. */
export interface JobRunner {
  readonly kind: "inprocess" | "bullmq";
  /** The device slots jobs run in here; none where this process only enqueues (the BullMQ dispatcher). */
  readonly slots?: SlotPool;
  /** Resumes unfinished experiments and starts the periodic sweep. */
  start(): Promise<void>;
  enqueue(experimentUuid: string): Promise<void>;
  /** Stops a job running in this process at once (the lease heartbeat carries cancels across processes). */
  cancelLocal(experimentUuid: string): void;
  stop(): Promise<void>;
}

export const newRunnerId = () => `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

/**
 * Re-finds work a crash left behind: every unfinished experiment not already known here is enqueued; the lease
 * decides whether it really runs (a live holder elsewhere keeps it). Runs at start and every JOB_LEASE_S.
 */
export function startSweep(
  repo: ExperimentRepository,
  intervalMs: number,
  enqueue: (uuid: string) => Promise<void>,
  onError: (err: unknown) => void,
) {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const sweep = async () => {
    try {
      const now = Date.now();
      for (const row of await repo.unfinished()) {
        const leaseLive = row.leaseOwner && row.leaseExpiresAt && row.leaseExpiresAt.getTime() > now;
        if (!leaseLive) await enqueue(row.id);
      }
    } catch (err) {
      onError(err);
    }
    // sweep catches its own errors: the timer has no promise to watch.
    if (!stopped) timer = setTimeout(() => void sweep(), intervalMs);
  };
  return {
    first: sweep(),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * The default runner, inside `serve`: each enqueued job waits for a device slot of the kind it needs (a GPU for
 * vision and detection where there is one, a CPU slot for tabular jobs), so the slots bound the concurrency and a
 * tabular job never waits behind GPU jobs for a GPU it would not use.
 */
export class InProcessRunner implements JobRunner {
  readonly kind = "inprocess" as const;
  private readonly known = new Map<string, AbortController>();
  private readonly running = new Set<Promise<void>>();
  private sweep?: ReturnType<typeof startSweep>;
  readonly slots: SlotPool;
  /** This runner's id in the lease column, and when it started (the Operations page lists it as the one runner). */
  readonly id: string;
  readonly startedAt = new Date();

  constructor(
    private readonly deps: JobDeps,
    slots?: SlotPool,
  ) {
    this.id = deps.runnerId;
    this.slots = slots ?? deviceSlotPool(deps.config.BUILDER_GPU_SLOTS, process.env, undefined, deps.config.BUILDER_CPU_SLOTS);
  }

  async start(): Promise<void> {
    this.sweep = startSweep(
      this.deps.repo,
      this.deps.config.JOB_LEASE_S * 1000,
      (id) => this.enqueue(id),
      (err) => this.deps.logger.warn({ err }, "sweep failed"),
    );
    await this.sweep.first;
  }

  async enqueue(uuid: string): Promise<void> {
    if (this.known.has(uuid)) return;
    const controller = new AbortController();
    this.known.set(uuid, controller);
    const task = this.run(uuid, controller.signal)
      .catch((err) => this.deps.logger.error({ err, experiment: uuid }, "job crashed"))
      .finally(() => {
        this.known.delete(uuid);
        this.running.delete(task);
      });
    this.running.add(task);
  }

  private async run(uuid: string, signal: AbortSignal): Promise<void> {
    const row = await this.deps.repo.byId(uuid);
    if (!row || signal.aborted) return;
    // A cancel or shutdown while waiting for a slot just drops the wait: nothing ran, nothing to undo.
    const slot = await this.slots.acquireWhenFree(slotNeedOf(row), signal, uuid).catch(() => null);
    if (!slot) return;
    try {
      const result = await runExperimentJob(this.deps, uuid, signal, slot);
      this.deps.logger.debug({ experiment: uuid, result, slot: slot.slot }, "job ended");
    } finally {
      this.slots.release(slot);
    }
  }

  cancelLocal(uuid: string): void {
    this.known.get(uuid)?.abort("cancel");
  }

  /** Shutdown: kills running pipelines and releases their leases, so the next start re-runs them. */
  async stop(): Promise<void> {
    this.sweep?.stop();
    for (const c of this.known.values()) c.abort("shutdown");
    await Promise.all([...this.running]);
  }
}
