import type { Redis } from "ioredis";
import { ApiError, msg } from "../errors.js";
import type { SlotPool } from "./gpu-slots.js";
import type { JobNeed } from "./queues.js";

/**
 * How long a worker is remembered after its last heartbeat. Also the cluster's memory of its GPUs: image jobs go
 * to the GPU queue while a GPU worker was heard from this recently, so the restart of the only GPU worker (or a
 * short loss of it) does not send its jobs to train for hours on the CPUs; a GPU host retired for good stops
 * counting ten minutes after its worker stopped.
 */
export const WORKER_FORGET_MS = 10 * 60_000;

export type SlotView = ReturnType<SlotPool["describe"]>[number];

/** What a worker says about itself at every heartbeat (stored as JSON in Redis, read by the API and the other workers). */
export interface WorkerRecord {
  /** The runner id, as in the experiments' lease column: host:pid:random. */
  id: string;
  host: string;
  pid: number;
  started_at: string;
  heartbeat_at: string;
  /** active: takes jobs; draining: finishes what it runs, takes nothing new; drained: idle, takes nothing; stopped: exited. */
  state: "active" | "draining" | "drained" | "stopped";
  /** The queues it consumes. */
  queues: JobNeed[];
  gpus: Array<{ index: string; name: string; memory_mib: number | null; simulated?: boolean }>;
  slots: SlotView[];
}

/** A worker as listed: its own state, or `lost` when a live one stopped beating (killed, frozen, cut off). */
export type WorkerStatus = WorkerRecord["state"] | "lost";
export interface ListedWorker extends WorkerRecord {
  status: WorkerStatus;
  /** Heard from within the liveness window and not stopped. */
  live: boolean;
  drain_requested: boolean;
}

/**
 * The workers of one queue pair, in Redis beside the queues (BullMQ keeps no registry of its workers' capacity).
 * Two hashes: `workers` (id -> the record, written only by that worker) and `drain` (id -> when a drain was asked,
 * written by the API or the CLI and read by the worker at its next heartbeat), so a heartbeat never overwrites a
 * drain request.
 */
export class WorkerRegistry {
  private readonly workersKey: string;
  private readonly drainKey: string;

  /** liveMs: a worker not heard from for this long is lost (the lease's length: its job is taken over by then). */
  constructor(
    private readonly redis: Redis,
    base: string,
    readonly liveMs: number,
  ) {
    this.workersKey = `builder:${base}:workers`;
    this.drainKey = `builder:${base}:drain`;
  }

  async beat(record: WorkerRecord): Promise<void> {
    await this.redis.hset(this.workersKey, record.id, JSON.stringify(record));
  }

  /** Every worker heard from in the last WORKER_FORGET_MS, by host; older ones are forgotten here. */
  async list(now = Date.now()): Promise<ListedWorker[]> {
    const [records, drains] = await Promise.all([this.redis.hgetall(this.workersKey), this.redis.hgetall(this.drainKey)]);
    const listed: ListedWorker[] = [];
    const forget: string[] = [];
    for (const [id, json] of Object.entries(records)) {
      const record = parse(json);
      const age = record ? now - Date.parse(record.heartbeat_at) : NaN;
      if (!record || !(age < WORKER_FORGET_MS)) {
        forget.push(id);
        continue;
      }
      const live = record.state !== "stopped" && age < this.liveMs;
      const status: WorkerStatus = record.state === "stopped" ? "stopped" : live ? record.state : "lost";
      listed.push({ ...record, status, live, drain_requested: id in drains });
    }
    if (forget.length) {
      await this.redis.hdel(this.workersKey, ...forget);
      await this.redis.hdel(this.drainKey, ...forget);
    }
    return listed.sort((a, b) => a.host.localeCompare(b.host) || a.started_at.localeCompare(b.started_at));
  }

  /** Whether image jobs go to the GPU queue: a worker with a GPU was heard from within WORKER_FORGET_MS. */
  async clusterHasGpu(): Promise<boolean> {
    return (await this.list()).some((w) => w.gpus.length > 0);
  }

  /** Whether a live worker other than `self` that takes jobs has a CPU slot free now (as of its last heartbeat). */
  async cpuSlotFreeElsewhere(self: string): Promise<boolean> {
    return (await this.list()).some(
      (w) => w.id !== self && w.status === "active" && w.queues.includes("cpu") && w.slots.some((s) => s.device === "cpu" && !s.busy),
    );
  }

  /** The workers `target` names: one worker by its id, or every worker on a host by the host's name; stopped ones left out. */
  async select(target: string): Promise<ListedWorker[]> {
    return (await this.list()).filter((w) => w.status !== "stopped" && (w.id === target || w.host === target));
  }

  /**
   * Asks the workers `target` names to drain: each pauses at its next heartbeat, finishes what it runs and takes
   * nothing new until resumed. Returns them as they were listed; throws not_found when none matches.
   */
  async drain(target: string): Promise<ListedWorker[]> {
    const named = await this.named(target);
    const at = new Date().toISOString();
    await this.redis.hset(this.drainKey, Object.fromEntries(named.map((w) => [w.id, at])));
    return named;
  }

  /** Withdraws the drain of the workers `target` names: they take jobs again at their next heartbeat. */
  async resume(target: string): Promise<ListedWorker[]> {
    const named = await this.named(target);
    await this.redis.hdel(this.drainKey, ...named.map((w) => w.id));
    return named;
  }

  private async named(target: string): Promise<ListedWorker[]> {
    const named = await this.select(target);
    if (!named.length) throw new ApiError(404, "not_found", msg("jobs.no_worker", { target }));
    return named;
  }

  async drainRequested(id: string): Promise<boolean> {
    return (await this.redis.hexists(this.drainKey, id)) === 1;
  }
}

function parse(json: string): WorkerRecord | null {
  try {
    const r = JSON.parse(json) as WorkerRecord;
    return typeof r?.id === "string" && typeof r.heartbeat_at === "string" ? r : null;
  } catch {
    return null;
  }
}
