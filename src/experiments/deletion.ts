import fs from "node:fs";
import type { Config } from "../config.js";
import { workDirOf } from "../jobs/job-run.js";
import type { JobRunner } from "../jobs/runner.js";
import type { Logger } from "../logger.js";
import { deleteUnder, type Bucket } from "../storage/bucket.js";
import { logFileOf } from "./log.js";
import type { ExperimentRepository, ExperimentRow } from "./repository.js";
import { DELETING } from "./state.js";

/** What an experiment leaves in the bucket, besides the dataset it was trained on (the user's own upload). */
export const experimentObjectFolders = (storagePrefix: string, row: Pick<ExperimentRow, "experimentId">) => [
  // Every published version: model, manifest, report.json and its figures.
  `models/${storagePrefix}/${row.experimentId}/`,
  // The job log's copy (logObjectOf).
  `logs/${storagePrefix}/${row.experimentId}/`,
];

/**
 * Deleting an experiment, crash-safe. The row is marked `deleting` first (ExperimentRepository.markDeleting);
 * then every step below is idempotent, so a deletion cut short by a kill is simply run again from the top, at
 * start-up or by the periodic sweep, until the row is gone:
 *  1. unpublish: the models rows go (the table's trigger makes every replica unload them at once), so a model
 *     never serves while its files are being removed;
 *  2. its job, if one runs, is stopped (the cancel flag, as POST .../cancel) and has let go of its lease;
 *  3. unpublish again (a version published between 1 and 2);
 *  4. the bucket: every model version, report, figure and the log copy;
 *  5. this host's files: the job's work folder and its log;
 *  6. the row, and with it its events.
 * Every path is built from the row's own workspace's storage prefix and number: nothing of another workspace is
 * ever touched.
 */
export class ExperimentDeletion {
  private readonly inFlight = new Map<string, Promise<void>>();
  private sweepTimer?: NodeJS.Timeout;
  private stopped = false;

  /**
   * derivedFolders: bucket folders other areas keep for the experiment (batch scoring's results), removed with it;
   * set once at start-up (services.ts) so that experiments need not import those areas.
   */
  derivedFolders: (row: ExperimentRow) => Promise<string[]> = async () => [];

  constructor(
    private readonly deps: {
      repo: ExperimentRepository;
      bucket: Bucket;
      config: Config;
      logger: Logger;
      runner: () => JobRunner | undefined;
    },
  ) {}

  /** Runs (or joins) the deletion of one `deleting` experiment to its end; failures are logged and left to the sweep. */
  finish(uuid: string): Promise<void> {
    let running = this.inFlight.get(uuid);
    if (!running) {
      running = this.run(uuid)
        .catch((err) => this.deps.logger.error({ err, experiment: uuid }, "experiment deletion failed; it is retried by the next sweep"))
        .finally(() => this.inFlight.delete(uuid));
      this.inFlight.set(uuid, running);
    }
    return running;
  }

  /** Throws when a step fails (finish() logs it); the row stays `deleting` and the next run starts over. */
  async run(uuid: string): Promise<void> {
    const { repo, bucket, config, logger } = this.deps;
    const row = await repo.byId(uuid);
    if (!row || row.status !== DELETING) return;
    await repo.deleteModels(uuid);
    await this.jobStopped(row);
    await repo.deleteModels(uuid);
    let objects = 0;
    const derived = await this.derivedFolders(row);
    // The workspace goes with its rows (cascade): without it there is no prefix, and its own erasure removes the folders.
    const prefix = await this.deps.repo.storagePrefixOf(row.workspaceId);
    for (const folder of [...(prefix ? experimentObjectFolders(prefix, row) : []), ...derived])
      objects += await deleteUnder(bucket, folder);
    await fs.promises.rm(workDirOf(config, uuid), { recursive: true, force: true });
    await fs.promises.rm(logFileOf(config, uuid), { force: true });
    await repo.deleteRow(uuid);
    // Once more for what another area was still writing (a batch finishing as its model was unpublished): such a
    // writer checks for its row after writing, so whatever it wrote before the row went is caught here.
    for (const folder of derived) objects += await deleteUnder(bucket, folder);
    logger.info({ experiment: uuid, experiment_id: row.experimentId, objects }, "experiment deleted");
  }

  /**
   * Waits until no runner holds the job: its heartbeat brings the cancel within a second, and the job then lets
   * go of its lease (a `deleting` row is never taken again). A holder that died leaves a lease that lapses.
   */
  private async jobStopped(row: ExperimentRow): Promise<void> {
    const deadline = Date.now() + (this.deps.config.JOB_LEASE_S * 2 + 5) * 1000;
    for (;;) {
      const now = await this.deps.repo.byId(row.id);
      if (!now?.leaseOwner || !now.leaseExpiresAt || now.leaseExpiresAt.getTime() < Date.now()) return;
      if (Date.now() > deadline) return;
      this.deps.runner()?.cancelLocal(row.id);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /**
   * Resumes every deletion left unfinished (at start-up), then every `intervalS` those untouched for as long
   * (a replica that died mid-deletion; the steps are idempotent, so two replicas on one are harmless).
   */
  startSweep(intervalS: number): Promise<void> {
    const sweep = async (idleS: number) => {
      try {
        for (const row of await this.deps.repo.deleting(idleS)) await this.finish(row.id);
      } catch (err) {
        this.deps.logger.warn({ err }, "deletion sweep failed");
      }
      if (!this.stopped) this.sweepTimer = setTimeout(() => void sweep(intervalS), intervalS * 1000).unref();
    };
    return sweep(0);
  }

  /** Deletes the experiments of a user being erased, one after the other, to the end. */
  async finishAll(rows: ExperimentRow[]): Promise<void> {
    for (const row of rows) {
      await this.finish(row.id);
      if (await this.deps.repo.byId(row.id)) throw new Error(`experiment ${row.experimentId} could not be deleted yet`);
    }
  }

  /** Stops the sweep and waits for the deletions under way (shutdown; what is cut short resumes at the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.sweepTimer);
    await Promise.all([...this.inFlight.values()]);
  }
}
