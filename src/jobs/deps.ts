import type { EventEmitter } from "node:events";
import type { Config } from "../config.js";
import type { ExperimentRepository } from "../experiments/repository.js";
import type { Logger } from "../logger.js";
import type { Bucket } from "../storage/bucket.js";
import type { PrepareDataset } from "./dataset-stage.js";

/** What a job needs from the house; the runner, the BullMQ worker and the job's stages all take this. */
export interface JobDeps {
  config: Config;
  repo: ExperimentRepository;
  bucket: Bucket;
  logger: Logger;
  events: EventEmitter;
  /** This runner's identity in the lease column (host:pid:random). */
  runnerId: string;
  prepareDataset?: PrepareDataset;
}

/** Why a running job was stopped from outside. */
export type StopReason = "cancel" | "shutdown" | "lease_lost";

export type JobResult = "finished" | "skipped" | "stopped";
