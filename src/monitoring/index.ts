import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import type { Logger } from "../logger.js";
import { MonitoringRecorder } from "./recorder.js";
import { MonitoringRepository } from "./repository.js";

/** How often expired prediction records are purged (each replica; the delete is idempotent). */
const PURGE_EVERY_MS = 3_600_000;
/** The first purge waits this long after start-up, out of the way of warming models. */
const FIRST_PURGE_MS = 60_000;

/** Monitoring as the rest of the app sees it (issue 49): the recorder serving tells, and the stored figures. */
export class Monitoring {
  readonly repo: MonitoringRepository;
  readonly recorder: MonitoringRecorder;
  private purgeTimer?: NodeJS.Timeout;

  constructor(private readonly deps: { config: Config; db: Db; logger: Logger }) {
    this.repo = new MonitoringRepository(deps.db);
    this.recorder = new MonitoringRecorder({ repo: this.repo, logger: deps.logger, flushMs: deps.config.MONITORING_FLUSH_MS });
  }

  start(): void {
    this.recorder.start();
    const loop = (delay: number) => {
      this.purgeTimer = setTimeout(() => {
        void this.purge()
          .catch((err) => this.deps.logger.warn({ err }, "purging expired prediction records failed; retried in an hour"))
          .finally(() => {
            if (this.purgeTimer) loop(PURGE_EVERY_MS);
          });
      }, delay).unref();
    };
    loop(FIRST_PURGE_MS);
  }

  /** Deletes prediction records (and hourly aggregates) older than PREDICTION_RETENTION_DAYS. */
  async purge(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - this.deps.config.PREDICTION_RETENTION_DAYS * 86_400_000);
    const n = await this.repo.purge(before);
    if (n) this.deps.logger.info({ records: n, before }, "expired prediction records purged");
    return n;
  }

  async close(): Promise<void> {
    clearTimeout(this.purgeTimer);
    this.purgeTimer = undefined;
    await this.recorder.close();
  }
}
