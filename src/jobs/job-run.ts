import fs from "node:fs";
import path from "node:path";
import type { JobSpec, Manifest } from "../contract/types.js";
import { logFileOf, logObjectOf } from "../experiments/log.js";
import type { ExperimentRepository, ExperimentRow } from "../experiments/repository.js";
import { isTerminal, STAGE_START, type ExperimentStatus } from "../experiments/state.js";
import type { Study } from "../experiments/study.js";
import type { Logger } from "../logger.js";
import type { PreparedDataset } from "./dataset-stage.js";
import type { JobDeps } from "./deps.js";
import { JobLease, JobStop } from "./lease.js";
import { notifyTerminal } from "./notify.js";
import type { DeviceSlot } from "./gpu-slots.js";
import { storedStudy } from "./spec.js";

export type TransitionSet = NonNullable<NonNullable<Parameters<ExperimentRepository["transition"]>[2]>["set"]>;

/** What the stages hand on to the later ones. */
export interface StageState {
  /** Retrospective: the published model under test, downloaded. */
  source?: { dir: string; manifest: Manifest };
  prepared?: PreparedDataset;
  spec?: JobSpec;
  /** The pipeline's manifest, path relative to outDir (train), then parsed (check). */
  manifestFile?: string;
  manifest?: Manifest;
}

export const workDirOf = (config: JobDeps["config"], uuid: string) => path.join(config.dataDir, "work", uuid);

/**
 * One run of one experiment under a held lease: where its files go, its log, and the one way to change its
 * status (conditional on the lease, recorded in the log, the terminal state notified).
 */
export class JobRun {
  readonly uuid: string;
  readonly work: string;
  readonly outDir: string;
  readonly specPath: string;
  readonly logFile: string;
  readonly state: StageState = {};
  status: ExperimentStatus;

  /** slot: the device this run's pipeline is pinned to (the runner's GPU or CPU slot); none = "auto". */
  constructor(
    readonly deps: JobDeps,
    readonly row: ExperimentRow,
    readonly lease: JobLease,
    readonly log: Logger,
    readonly slot?: DeviceSlot,
  ) {
    this.uuid = row.id;
    this.status = row.status as ExperimentStatus;
    this.work = workDirOf(deps.config, row.id);
    this.outDir = path.join(this.work, "out");
    this.specPath = path.join(this.work, "spec.json");
    this.logFile = logFileOf(deps.config, row.id);
    const folder = path.dirname(this.logFile);
    this.logWrites = fs.promises.mkdir(folder, { recursive: true }).then(
      () => undefined,
      (err) => log.warn({ err }, "could not create the log folder"),
    );
  }

  /** Appends are chained (in order) and never block the event loop the API serves from. */
  private logWrites: Promise<void>;

  private prefix?: Promise<string>;
  /**
   * Where the experiment's workspace keeps its objects (its zip, models and log copy; workspaces/storage-prefix.ts),
   * read once per run. A workspace gone meanwhile has taken the row with it (cascade): the run fails.
   */
  storagePrefix(): Promise<string> {
    this.prefix ??= this.deps.repo.storagePrefixOf(this.row.workspaceId).then((p) => {
      if (p === undefined) throw new Error(`the workspace of experiment ${this.row.experimentId} is gone`);
      return p;
    });
    return this.prefix;
  }

  /** Resolves once every line so far is in the file (before the log is read or copied). */
  flushLog(): Promise<void> {
    return this.logWrites;
  }

  private parsedStudy?: Study;
  /** Parsed on first use, inside a stage: a stored study that does not parse fails the job with the reason. */
  get study(): Study {
    return (this.parsedStudy ??= storedStudy(this.deps.config, this.row));
  }

  /** A line in the job log (GET .../logs), beside the pipeline's stderr. */
  jobLog(line: string): void {
    const text = `[builder ${new Date().toISOString()}] ${line}\n`;
    this.logWrites = this.logWrites
      .then(() => fs.promises.appendFile(this.logFile, text))
      .catch((err) => this.log.warn({ err }, "could not write the job log"));
  }

  async move(to: ExperimentStatus, set: TransitionSet = {}): Promise<ExperimentRow> {
    const { repo } = this.deps;
    const line = `status ${to}${set.failureReason ? `: ${set.failureReason}` : ""}`;
    const terminal = isTerminal(to);
    // A client that sees the terminal status reads the log next: its last line, here and in the bucket's copy,
    // must already be there. So the terminal line is written (and copied) before the status becomes visible.
    if (terminal) await this.writeFinalLog(line);
    const progress = { fraction: STAGE_START[to], stage: to, updated_at: new Date().toISOString() };
    const updated = await repo.transition(this.uuid, to, {
      owner: this.lease.owner,
      set,
      attempt: this.row.attempts > 1 ? this.row.attempts : undefined,
      progress,
    });
    if (!updated) {
      if (terminal) this.jobLog(`(${to} was not recorded: this runner no longer holds the job)`);
      throw new JobStop("refused");
    }
    this.status = to;
    if (terminal) notifyTerminal(this.deps, updated);
    else this.jobLog(line);
    return updated;
  }

  /** The terminal line, flushed, and the log copied to the bucket (for GET .../logs when another host ran the job). */
  async writeFinalLog(line: string): Promise<void> {
    this.jobLog(line);
    await this.flushLog();
    await this.storagePrefix()
      .then((prefix) => this.deps.bucket.uploadFile(this.logFile, logObjectOf(prefix, this.row)))
      .catch((err) => this.log.warn({ err }, "could not copy the job log to the bucket"));
  }
}
