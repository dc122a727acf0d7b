import { DelayedError, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { Config } from "../config.js";
import type { JobDeps } from "./deps.js";
import { runExperimentJob } from "./experiment-job.js";
import { startSweep, type JobRunner } from "./runner.js";
import { deviceSlotPool, slotNeedOf, type SlotPool } from "./gpu-slots.js";

interface ExperimentJobData {
  experimentUuid: string;
}

/**
 * Chosen together, the same on every worker (they derive from JOB_LEASE_S):
 * - lockDuration = the lease: a worker that stops renewing (kill -9, frozen host) loses both at the same time;
 * - stalledInterval = the lease: a dead worker's job is back in the wait list within about two leases;
 * - maxStalledCount = JOB_MAX_ATTEMPTS: a job that keeps killing its workers is failed, not retried forever.
 * The database lease, not BullMQ, is what stops a job from running twice; BullMQ only has to deliver it again.
 */
export function bullmqSettings(config: Config) {
  const lease = config.JOB_LEASE_S * 1000;
  return { lockDuration: lease, stalledInterval: lease, maxStalledCount: config.JOB_MAX_ATTEMPTS };
}

export function redisConnection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: false });
}

const JOB_OPTIONS = { attempts: 5, backoff: { type: "fixed", delay: 2000 }, removeOnComplete: true, removeOnFail: true } as const;

/** The API side in BUILDER_RUNNER=bullmq: enqueues; `./builder worker` processes run the jobs. */
export class BullmqDispatcher implements JobRunner {
  readonly kind = "bullmq" as const;
  private readonly connection: Redis;
  private readonly queue: Queue<ExperimentJobData>;
  private sweep?: ReturnType<typeof startSweep>;

  constructor(private readonly deps: Pick<JobDeps, "config" | "repo" | "logger">) {
    if (!deps.config.REDIS_URL) throw new Error("BUILDER_RUNNER=bullmq needs REDIS_URL");
    this.connection = redisConnection(deps.config.REDIS_URL);
    this.queue = new Queue<ExperimentJobData>(deps.config.BULLMQ_QUEUE, { connection: this.connection });
  }

  async start(): Promise<void> {
    // Not awaited: serve must come up even while Redis is down; the sweep keeps trying every JOB_LEASE_S.
    this.sweep = startSweep(
      this.deps.repo,
      this.deps.config.JOB_LEASE_S * 1000,
      (id) => this.enqueue(id),
      (err) => this.deps.logger.warn({ err }, "sweep failed"),
    );
  }

  async enqueue(uuid: string): Promise<void> {
    // jobId = the experiment: BullMQ ignores a second add while the first is waiting or active.
    await this.queue.add("experiment", { experimentUuid: uuid }, { ...JOB_OPTIONS, jobId: uuid });
  }

  cancelLocal(): void {
    // Workers see cancel_requested at their next lease heartbeat (every second).
  }

  async stop(): Promise<void> {
    this.sweep?.stop();
    await this.queue.close();
    await this.connection.quit().catch(() => undefined);
  }
}

/** How long a job that found no slot of its kind free here waits in the queue before a worker takes it again. */
export const SLOT_BUSY_DELAY_MS = 2000;

/**
 * `./builder worker`: consumes the queue with the same job code as the in-process runner, one job per device
 * slot. The worker takes up to as many jobs as it has slots, but a job may need a kind of slot that is busy here
 * (a third vision job on two busy GPUs while the CPU slot is free for tabular work): it goes back to the queue,
 * delayed, for this or another worker to take, rather than waiting here and keeping the free slot from a job
 * that fits it.
 */
export function startBullmqWorker(
  deps: JobDeps,
  slots: SlotPool = deviceSlotPool(deps.config.BUILDER_GPU_SLOTS, process.env, undefined, deps.config.BUILDER_CPU_SLOTS),
): { worker: Worker<ExperimentJobData>; slots: SlotPool; stop: () => Promise<void> } {
  if (!deps.config.REDIS_URL) throw new Error("./builder worker needs REDIS_URL");
  const connection = redisConnection(deps.config.REDIS_URL);
  const running = new Map<string, AbortController>();
  const worker = new Worker<ExperimentJobData>(
    deps.config.BULLMQ_QUEUE,
    async (job, token) => {
      const uuid = job.data.experimentUuid;
      const row = await deps.repo.byId(uuid);
      if (!row) return "skipped";
      const slot = slots.tryAcquire(slotNeedOf(row));
      if (!slot) {
        // Not a failure (no attempt is spent): back in the queue, for whichever worker has a fitting slot free.
        await job.moveToDelayed(Date.now() + SLOT_BUSY_DELAY_MS, token);
        throw new DelayedError();
      }
      const controller = new AbortController();
      running.set(uuid, controller);
      try {
        const result = await runExperimentJob(deps, uuid, controller.signal, slot);
        // Stopped (shutdown, lease lost): hand it back to the queue; the lease keeps a second run out.
        if (result === "stopped") throw new Error("the job was stopped before it finished; it will be retried");
        return result;
      } finally {
        slots.release(slot);
        running.delete(uuid);
      }
    },
    { connection, concurrency: slots.size, ...bullmqSettings(deps.config) },
  );
  worker.on("error", (err) => deps.logger.warn({ err }, "bullmq worker error"));
  return {
    worker,
    slots,
    stop: async () => {
      for (const c of running.values()) c.abort("shutdown");
      await worker.close();
      await connection.quit().catch(() => undefined);
    },
  };
}
