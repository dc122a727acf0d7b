import type { Redis } from "ioredis";
import type { JobDeps } from "./deps.js";
import { startSweep, type JobRunner } from "./runner.js";
import { closeQueues, kindOf, NEEDS, openQueues, placeJob, redisConnection, routeOf, type JobNeed, type Queues } from "./queues.js";
import { WorkerRegistry } from "./worker-registry.js";

export { bullmqSettings, redisConnection } from "./queues.js";

/** How long the dispatcher reuses its answer to "has the cluster a GPU worker" (a sweep asks once per queued experiment). */
const ROUTING_CACHE_MS = 1000;

export interface QueueDepth {
  need: JobNeed;
  /** Waiting to be taken (including those handed back for a moment for lack of a fitting slot). */
  waiting: number;
  /** Taken by a worker. */
  active: number;
}

/**
 * The API side in BUILDER_RUNNER=bullmq: puts each experiment in the queue of what it needs (queues.ts routeOf,
 * from the worker registry), and re-places waiting ones at every sweep when that changed; `./builder worker`
 * processes run them.
 */
export class BullmqDispatcher implements JobRunner {
  readonly kind = "bullmq" as const;
  private readonly connection: Redis;
  readonly queues: Queues;
  readonly registry: WorkerRegistry;
  private sweep?: ReturnType<typeof startSweep>;
  private routing?: { at: number; hasGpu: Promise<boolean> };

  constructor(private readonly deps: Pick<JobDeps, "config" | "repo" | "logger">) {
    if (!deps.config.REDIS_URL) throw new Error("BUILDER_RUNNER=bullmq needs REDIS_URL");
    this.connection = redisConnection(deps.config.REDIS_URL);
    this.queues = openQueues(deps.config.BULLMQ_QUEUE, this.connection);
    this.registry = new WorkerRegistry(this.connection, deps.config.BULLMQ_QUEUE, deps.config.JOB_LEASE_S * 1000);
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
    const row = await this.deps.repo.byId(uuid);
    if (!row) return;
    const need = routeOf(row, await this.clusterHasGpu());
    await placeJob(this.queues, { experimentUuid: uuid, need, kind: kindOf(row) });
  }

  private clusterHasGpu(): Promise<boolean> {
    const now = Date.now();
    if (!this.routing || now - this.routing.at > ROUTING_CACHE_MS) {
      const hasGpu = this.registry.clusterHasGpu();
      this.routing = { at: now, hasGpu };
      hasGpu.catch(() => (this.routing = undefined)); // a failed read is not remembered
    }
    return this.routing.hasGpu;
  }

  /** The depth of each queue, for the Operations page and /metrics. */
  async depths(): Promise<QueueDepth[]> {
    return Promise.all(
      NEEDS.map(async (need) => {
        const c = await this.queues[need].getJobCounts("waiting", "prioritized", "delayed", "active");
        return { need, waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0), active: c.active ?? 0 };
      }),
    );
  }

  cancelLocal(): void {
    // Workers see cancel_requested at their next lease heartbeat (every second).
  }

  async stop(): Promise<void> {
    this.sweep?.stop();
    await closeQueues(this.queues);
    await this.connection.quit().catch(() => undefined);
  }
}
