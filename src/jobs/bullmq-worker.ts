import { hostname } from "node:os";
import { DelayedError, WaitingError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { JobDeps } from "./deps.js";
import { runExperimentJob } from "./experiment-job.js";
import { deviceSlotPool, type Gpu, type SlotPool } from "./gpu-slots.js";
import {
  addJob,
  bullmqSettings,
  closeQueues,
  kindOf,
  openQueues,
  queueName,
  redisConnection,
  routeOf,
  type ExperimentJobData,
  type JobNeed,
  type Queues,
} from "./queues.js";
import { simulatedGpus } from "./simulated-gpus.js";
import { WorkerRegistry, type WorkerRecord } from "./worker-registry.js";

/** How long a job this worker cannot run now (no fitting slot free, or a free CPU worker elsewhere) waits before it is offered again. */
export const SLOT_BUSY_DELAY_MS = 2000;

/** A worker's heartbeat: often enough that a drain is seen within a couple of seconds and a lost worker within a lease. */
const heartbeatMs = (liveMs: number) => Math.max(200, Math.min(2000, liveMs / 3));

export interface RunningWorker {
  id: string;
  slots: SlotPool;
  /** The queues it consumes, and how many jobs of each at once. */
  consumes: Array<{ need: JobNeed; concurrency: number }>;
  state(): WorkerRecord["state"];
  stop(): Promise<void>;
}

/** This worker's slots: the GPUs nvidia-smi lists, or those BUILDER_SIMULATE_GPUS declares. */
export function workerSlotPool(config: JobDeps["config"]): SlotPool {
  const declared = config.BUILDER_SIMULATE_GPUS ? simulatedGpus(config.BUILDER_SIMULATE_GPUS) : undefined;
  return deviceSlotPool(config.BUILDER_GPU_SLOTS, process.env, undefined, config.BUILDER_CPU_SLOTS, declared);
}

/**
 * `./builder worker`: runs experiments from the two queues with the same job code as the in-process runner.
 *
 * - It consumes the GPU queue only if it has GPUs, with as many jobs at once as GPU slots, and the CPU queue with
 *   its CPU slots; so BullMQ hands a GPU job only to a worker with a GPU slot free, and CPU work never holds one.
 *   A GPU host without CPU slots (BUILDER_CPU_SLOTS=0) lends its GPU slots to CPU jobs, but consumes the CPU queue
 *   only while no other worker has a CPU slot free.
 * - It says what it can run (its GPUs and their memory, its slots and what runs in each, its state) in the worker
 *   registry at every heartbeat, and reads there whether it was asked to drain: then it pauses its consumers,
 *   finishes what it runs and takes nothing new until resumed.
 * - A job whose need changed since it was queued (the cluster's first GPU worker came, or its last went) is put in
 *   the right queue instead of being run here.
 */
export async function startBullmqWorker(deps: JobDeps, slots: SlotPool = workerSlotPool(deps.config)): Promise<RunningWorker> {
  const worker = new BullmqWorker(deps, slots);
  await worker.beat();
  return worker;
}

class BullmqWorker implements RunningWorker {
  readonly id: string;
  readonly consumes: RunningWorker["consumes"] = [];
  private readonly connection: Redis;
  private readonly queues: Queues;
  private readonly registry: WorkerRegistry;
  private readonly consumers: Array<Worker<ExperimentJobData>>;
  private readonly running = new Map<string, AbortController>();
  private readonly hasGpu: boolean;
  /** A GPU host without CPU slots (BUILDER_CPU_SLOTS=0): its CPU consumer borrows the GPU slots. */
  private readonly lending: boolean;
  private readonly startedAt = new Date().toISOString();
  private current: WorkerRecord["state"] = "active";
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly deps: JobDeps,
    readonly slots: SlotPool,
  ) {
    const { config } = deps;
    if (!config.REDIS_URL) throw new Error("./builder worker needs REDIS_URL");
    this.id = deps.runnerId;
    this.connection = redisConnection(config.REDIS_URL);
    this.queues = openQueues(config.BULLMQ_QUEUE, this.connection);
    this.registry = new WorkerRegistry(this.connection, config.BULLMQ_QUEUE, config.JOB_LEASE_S * 1000);
    const gpuSlots = slots.count("cuda");
    const cpuSlots = slots.count("cpu");
    this.hasGpu = gpuSlots > 0;
    this.lending = gpuSlots > 0 && cpuSlots === 0;
    if (gpuSlots > 0) this.consumes.push({ need: "gpu", concurrency: gpuSlots });
    this.consumes.push({ need: "cpu", concurrency: cpuSlots || gpuSlots });
    this.consumers = this.consumes.map(({ need, concurrency }) => {
      // Started by the first heartbeat (applyConsumers), once this worker knows which of its queues to take from.
      const consumer = new Worker<ExperimentJobData>(queueName(config.BULLMQ_QUEUE, need), (job, token) => this.process(need, job, token), {
        connection: this.connection,
        concurrency,
        autorun: false,
        ...bullmqSettings(config),
      });
      consumer.on("error", (err) => deps.logger.warn({ err, queue: need }, "bullmq worker error"));
      return consumer;
    });
  }

  state(): WorkerRecord["state"] {
    return this.current;
  }

  private async process(need: JobNeed, job: Job<ExperimentJobData>, token?: string): Promise<string> {
    const { deps } = this;
    const uuid = job.data.experimentUuid;
    // Paused consumers fetch nothing, but a fetch already waiting on Redis when the drain came may still deliver one.
    if (this.current !== "active") return handBack(job, token, 0);
    const row = await deps.repo.byId(uuid);
    if (!row) return "skipped";
    const wanted = routeOf(row, this.hasGpu || (await this.registry.clusterHasGpu()));
    if (wanted !== need) {
      await addJob(this.queues[wanted], { experimentUuid: uuid, need: wanted, kind: kindOf(row) });
      deps.logger.info({ experiment: uuid, from: need, to: wanted }, "job moved to the queue of what it needs now");
      return "rerouted";
    }
    if (this.lending && need === "cpu" && (await this.registry.cpuSlotFreeElsewhere(this.id)))
      return handBack(job, token, SLOT_BUSY_DELAY_MS);
    const slot = this.slots.tryAcquire(need, uuid);
    // Only when lending: the GPU consumer and the CPU consumer share the GPU slots.
    if (!slot) return handBack(job, token, SLOT_BUSY_DELAY_MS);
    const controller = new AbortController();
    this.running.set(uuid, controller);
    try {
      const result = await runExperimentJob(deps, uuid, controller.signal, slot);
      // Stopped (shutdown, lease lost): hand it back to the queue; the lease keeps a second run out.
      if (result === "stopped") throw new Error("the job was stopped before it finished; it will be retried");
      return result;
    } finally {
      this.slots.release(slot);
      this.running.delete(uuid);
    }
  }

  private record(): WorkerRecord {
    return {
      id: this.id,
      host: hostname(),
      pid: process.pid,
      started_at: this.startedAt,
      heartbeat_at: new Date().toISOString(),
      state: this.current,
      queues: this.consumes.map((c) => c.need),
      gpus: gpusOf(this.slots),
      slots: this.slots.describe({ holders: true }),
    };
  }

  /** Follows the drain flag: draining when asked, active again when withdrawn; drained once nothing runs. */
  private async followDrain(): Promise<void> {
    const { logger } = this.deps;
    const asked = await this.registry.drainRequested(this.id);
    if (asked && this.current === "active") {
      this.current = "draining";
      logger.info({ running: this.running.size }, "worker draining: finishing what it runs, taking nothing new");
    } else if (!asked && (this.current === "draining" || this.current === "drained")) {
      this.current = "active";
      logger.info("worker resumed: taking jobs again");
    }
    if (this.current === "draining" && this.running.size === 0) {
      this.current = "drained";
      logger.info("worker drained: nothing runs here; it can be stopped, or resumed");
    }
  }

  /**
   * Runs or pauses each consumer (a paused one finishes its jobs and fetches nothing): none unless active; the CPU
   * consumer of a lending GPU host only while no other worker has a CPU slot free, so tables go to CPU workers first.
   */
  private async applyConsumers(): Promise<void> {
    const lend = this.lending && this.current === "active" ? !(await this.registry.cpuSlotFreeElsewhere(this.id)) : true;
    await Promise.all(
      this.consumes.map(async ({ need }, i) => {
        const consumer = this.consumers[i];
        const run = this.current === "active" && (need === "gpu" || lend);
        if (run && (!consumer.isRunning() || consumer.isPaused())) await consumer.resume();
        else if (!run && consumer.isRunning() && !consumer.isPaused()) await consumer.pause(true);
      }),
    );
  }

  /** One heartbeat, then the next one scheduled; catches its own errors (the timer has no promise to watch). */
  async beat(): Promise<void> {
    try {
      await this.followDrain();
      await this.applyConsumers();
      await this.registry.beat(this.record());
    } catch (err) {
      this.deps.logger.warn({ err }, "worker heartbeat failed");
    }
    if (this.current !== "stopped") this.timer = setTimeout(() => void this.beat(), heartbeatMs(this.registry.liveMs));
  }

  async stop(): Promise<void> {
    this.current = "stopped";
    clearTimeout(this.timer);
    for (const c of this.running.values()) c.abort("shutdown");
    await Promise.all(this.consumers.map((w) => w.close()));
    await this.registry.beat(this.record()).catch(() => undefined);
    await closeQueues(this.queues);
    await this.connection.quit().catch(() => undefined);
  }
}

/** Back to the queue without spending an attempt: at once for another worker (drained here), or after a delay. */
async function handBack(job: Job<ExperimentJobData>, token: string | undefined, delayMs: number): Promise<never> {
  if (delayMs === 0) {
    await job.moveToWait(token);
    throw new WaitingError();
  }
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

/** The distinct GPUs behind a pool's slots (two slots may share one). */
function gpusOf(slots: SlotPool): WorkerRecord["gpus"] {
  const seen = new Map<string, Gpu>();
  for (const s of slots.slots) if (s.gpu) seen.set(s.gpu.id, s.gpu);
  return [...seen.values()].map((g) => ({
    index: g.index,
    name: g.name,
    memory_mib: g.memoryMiB,
    ...(g.simulated ? { simulated: true } : {}),
  }));
}
