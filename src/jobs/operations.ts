import { hostname } from "node:os";
import { ApiError, msg } from "../errors.js";
import type { ExperimentRepository, ExperimentRow } from "../experiments/repository.js";
import { BullmqDispatcher, type QueueDepth } from "./bullmq.js";
import type { JobNeed } from "./queues.js";
import { kindOf } from "./queues.js";
import { InProcessRunner, type JobRunner } from "./runner.js";
import type { ListedWorker, SlotView, WorkerStatus } from "./worker-registry.js";

/** An experiment as the Operations page names it: its owner's email and number, never its name (it may name a patient). */
export interface JobRef {
  experiment_id: number;
  owner_email: string | null;
}

export interface WorkerView {
  id: string;
  host: string;
  pid: number;
  status: WorkerStatus;
  drain_requested: boolean;
  started_at: string;
  heartbeat_at: string;
  queues: JobNeed[];
  gpus: ListedWorker["gpus"];
  slots: Array<{
    slot: number;
    device: "cuda" | "cpu";
    gpu_index: string | null;
    busy: boolean;
    job: JobRef | null;
    since: string | null;
  }>;
}

export interface RunningJobView extends JobRef {
  kind: string;
  status: string;
  attempt: number;
  /** The runner holding its lease (a worker's id). */
  worker: string;
  slot: number | null;
  device: "cuda" | "cpu" | null;
  since: string | null;
}

export interface OperationsView {
  runner: "inprocess" | "bullmq";
  checked_at: string;
  queues: QueueDepth[];
  workers: WorkerView[];
  running: RunningJobView[];
}

/**
 * What the administrators' Operations page shows (GET /v1/admin/workers) and the drain it offers. With BullMQ:
 * the worker registry, the two queues' depths and the experiments whose lease is live; with the in-process
 * runner: this server as the one runner, its slots and the jobs waiting in it.
 */
export class OperationsService {
  constructor(
    private readonly deps: {
      runner: () => JobRunner | undefined;
      repo: ExperimentRepository;
      emailOf: (userId: string) => Promise<string | undefined>;
    },
  ) {}

  async view(now = new Date()): Promise<OperationsView> {
    const runner = this.deps.runner();
    const unfinished = await this.deps.repo.unfinished();
    const refs = await this.refsOf(unfinished);
    let workers: ListedWorker[];
    let queues: QueueDepth[];
    if (runner instanceof BullmqDispatcher) {
      [workers, queues] = await Promise.all([runner.registry.list(now.getTime()), runner.depths()]);
    } else if (runner instanceof InProcessRunner) {
      workers = [inProcessWorker(runner, now)];
      queues = inProcessDepths(runner);
    } else {
      workers = [];
      queues = [];
    }
    const workerViews = workers.map((w) => workerView(w, refs));
    return {
      runner: runner?.kind ?? "inprocess",
      checked_at: now.toISOString(),
      queues,
      workers: workerViews,
      running: runningJobs(unfinished, refs, workers, now),
    };
  }

  /** `./builder worker drain` from the page: the workers `target` (an id or a host) names stop taking jobs. */
  async drain(target: string): Promise<string[]> {
    return (await this.registry().drain(target)).map((w) => w.id);
  }

  async resume(target: string): Promise<string[]> {
    return (await this.registry().resume(target)).map((w) => w.id);
  }

  private registry() {
    const runner = this.deps.runner();
    if (runner instanceof BullmqDispatcher) return runner.registry;
    throw new ApiError(409, "inprocess_runner", msg("jobs.inprocess_runner"));
  }

  private async refsOf(rows: ExperimentRow[]): Promise<Map<string, JobRef>> {
    // A row whose builder's account was erased (user_id null) names nobody.
    const emails = new Map<string, string | null>();
    for (const userId of new Set(rows.map((r) => r.userId))) if (userId) emails.set(userId, (await this.deps.emailOf(userId)) ?? null);
    return new Map(
      rows.map((r) => [r.id, { experiment_id: r.experimentId, owner_email: r.userId ? (emails.get(r.userId) ?? null) : null }]),
    );
  }
}

function workerView(w: ListedWorker, refs: Map<string, JobRef>): WorkerView {
  return {
    id: w.id,
    host: w.host,
    pid: w.pid,
    status: w.status,
    drain_requested: w.drain_requested,
    started_at: w.started_at,
    heartbeat_at: w.heartbeat_at,
    queues: w.queues,
    gpus: w.gpus,
    // A lost or stopped worker runs nothing any more (its jobs are taken over): its last report is not shown as busy.
    slots: w.slots.map((s) => {
      const busy = w.live && s.busy;
      return {
        slot: s.slot,
        device: s.device,
        gpu_index: s.gpu?.index ?? null,
        busy,
        job: busy && s.experiment ? (refs.get(s.experiment) ?? null) : null,
        since: busy ? (s.since ?? null) : null,
      };
    }),
  };
}

/** Experiments whose lease is live, with the slot their runner reports them in. */
function runningJobs(rows: ExperimentRow[], refs: Map<string, JobRef>, workers: ListedWorker[], now: Date): RunningJobView[] {
  const slotOf = new Map<string, SlotView>();
  for (const w of workers) if (w.live) for (const s of w.slots) if (s.experiment) slotOf.set(s.experiment, s);
  return rows
    .filter((r) => r.leaseOwner && r.leaseExpiresAt && r.leaseExpiresAt > now)
    .map((r) => {
      const slot = slotOf.get(r.id);
      return {
        ...refs.get(r.id)!,
        kind: kindOf(r),
        status: r.status,
        attempt: r.attempts,
        worker: r.leaseOwner!,
        slot: slot?.slot ?? null,
        device: slot?.device ?? null,
        since: slot?.since ?? null,
      };
    });
}

function inProcessWorker(runner: InProcessRunner, now: Date): ListedWorker {
  const slots = runner.slots.describe({ holders: true });
  const gpus = new Map(slots.filter((s) => s.gpu).map((s) => [s.gpu!.id, s.gpu!]));
  return {
    id: runner.id,
    host: hostname(),
    pid: process.pid,
    started_at: runner.startedAt.toISOString(),
    heartbeat_at: now.toISOString(),
    state: "active",
    status: "active",
    live: true,
    drain_requested: false,
    queues: ["gpu", "cpu"],
    gpus: [...gpus.values()].map((g) => ({
      index: g.index,
      name: g.name,
      memory_mib: g.memory_mib,
      ...(g.simulated ? { simulated: true } : {}),
    })),
    slots,
  };
}

/** The in-process runner's queue: jobs waiting in this server for a slot (on a host without GPUs every wait is for the CPU). */
function inProcessDepths(runner: InProcessRunner): QueueDepth[] {
  const waiting = runner.slots.waiting();
  const slots = runner.slots.describe();
  const hasGpu = slots.some((s) => s.device === "cuda");
  const busy = (device: "cuda" | "cpu") => slots.filter((s) => s.device === device && s.busy).length;
  return [
    { need: "gpu", waiting: hasGpu ? waiting.gpu : 0, active: busy("cuda") },
    { need: "cpu", waiting: hasGpu ? waiting.cpu : waiting.cpu + waiting.gpu, active: busy("cpu") },
  ];
}
