import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { Config } from "../config.js";
import { slotNeedOf, type SlotNeed } from "./gpu-slots.js";

/**
 * What a job needs, and so which BullMQ queue it waits in: `gpu` (vision and detection training, while the cluster
 * has a GPU worker) or `cpu` (tables always; images too on a cluster without GPUs). One queue per need, so a GPU
 * job never waits behind CPU work: a worker consumes the GPU queue with as many jobs at once as it has GPU slots,
 * and the CPU queue with its CPU slots.
 */
export type JobNeed = SlotNeed;
export const NEEDS: readonly JobNeed[] = ["gpu", "cpu"];

export interface ExperimentJobData {
  experimentUuid: string;
  need: JobNeed;
  /** The study's kind (vision_classification, detection, tabular): for whoever reads the queue. */
  kind: string;
}

export type Queues = Record<JobNeed, Queue<ExperimentJobData>>;

/** BULLMQ_QUEUE names the pair: `<BULLMQ_QUEUE>-gpu` and `<BULLMQ_QUEUE>-cpu`. */
export const queueName = (base: string, need: JobNeed) => `${base}-${need}`;

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

export const JOB_OPTIONS = { attempts: 5, backoff: { type: "fixed", delay: 2000 }, removeOnComplete: true, removeOnFail: true } as const;

export function openQueues(base: string, connection: Redis): Queues {
  return {
    gpu: new Queue<ExperimentJobData>(queueName(base, "gpu"), { connection }),
    cpu: new Queue<ExperimentJobData>(queueName(base, "cpu"), { connection }),
  };
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(NEEDS.map((n) => queues[n].close()));
}

/**
 * The queue an experiment goes to. Tables need a CPU. Images need a GPU while the cluster has a GPU worker (one
 * heard from in the last WORKER_FORGET_MS, so a GPU worker's restart does not send its jobs to the CPUs), and a
 * CPU otherwise: a cluster of CPU-only workers still trains image models.
 */
export function routeOf(row: { study?: unknown; request?: unknown }, clusterHasGpu: boolean): JobNeed {
  return slotNeedOf(row) === "gpu" && clusterHasGpu ? "gpu" : "cpu";
}

/** The study's kind (tabular, vision_classification, detection); the request's task on rows from before studies. */
export function kindOf(row: { study?: unknown; request?: unknown }): string {
  const kind = (row.study as { kind?: unknown } | null | undefined)?.kind ?? (row.request as { task?: unknown } | null | undefined)?.task;
  return typeof kind === "string" ? kind : "unknown";
}

/** Adds the job (jobId = the experiment: BullMQ ignores a second add while the first is waiting or running). */
export async function addJob(queue: Queue<ExperimentJobData>, data: ExperimentJobData): Promise<void> {
  await queue.add("experiment", data, { ...JOB_OPTIONS, jobId: data.experimentUuid });
}

/**
 * Puts the experiment in the queue of its need. Where it still waits in the other queue (its need changed since:
 * the cluster's first GPU worker came, or its last one went), it is taken out of that one first; where it runs
 * there, it is left alone (the database lease keeps a second run out anyway).
 */
export async function placeJob(queues: Queues, data: ExperimentJobData): Promise<"queued" | "running"> {
  const stale = await queues[data.need === "gpu" ? "cpu" : "gpu"].getJob(data.experimentUuid);
  if (stale) {
    if ((await stale.getState()) === "active") return "running";
    try {
      await stale.remove();
    } catch {
      return "running"; // a worker took it between the two calls: it is locked, and runs there
    }
  }
  await addJob(queues[data.need], data);
  return "queued";
}
