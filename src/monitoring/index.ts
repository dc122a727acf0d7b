import type { AuditLog } from "../audit/audit-log.js";
import type { Config } from "../config.js";
import type { CallbackSender } from "../jobs/callback.js";
import type { Mailer } from "./alert-delivery.js";
import { AlertService } from "./alerts.js";
import type { Db } from "../db/client.js";
import type { Logger } from "../logger.js";
import { errors, msg } from "../errors.js";
import { ModelNotPublished } from "../serving/errors.js";
import type { ModelRepository, ModelRow } from "../serving/model-repository.js";
import { checkOutcomes, type OutcomeIn } from "./outcomes.js";
import { MonitoringRecorder } from "./recorder.js";
import { MonitoringRepository } from "./repository.js";
import { buildReport, MAX_RECORDS, type MonitoringReport } from "./report.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/** How often expired prediction records are purged (each replica; the delete is idempotent). */
const PURGE_EVERY_MS = 3_600_000;
/** The first purge waits this long after start-up, out of the way of warming models. */
const FIRST_PURGE_MS = 60_000;

/** Monitoring as the rest of the app sees it (issue 49): the recorder serving tells, and the stored figures. */
export class Monitoring {
  readonly repo: MonitoringRepository;
  readonly recorder: MonitoringRecorder;
  readonly alerts: AlertService;
  private purgeTimer?: NodeJS.Timeout;

  constructor(
    private readonly deps: {
      config: Config;
      db: Db;
      logger: Logger;
      models: ModelRepository;
      audit?: AuditLog;
      /** Tests may swap the webhook sender and the mailer (remote services); production uses the guard and SMTP. */
      send?: CallbackSender;
      mailer?: Mailer;
    },
  ) {
    this.repo = new MonitoringRepository(deps.db);
    this.recorder = new MonitoringRecorder({ repo: this.repo, logger: deps.logger, flushMs: deps.config.MONITORING_FLUSH_MS });
    this.alerts = new AlertService({
      config: deps.config,
      db: deps.db,
      logger: deps.logger,
      models: deps.models,
      audit: deps.audit,
      send: deps.send,
      mailer: deps.mailer,
      reportFor: async (model, experimentId, from, to) => {
        await this.recorder.flush();
        // Without the AUC's bootstrap: the rules do not read it, and this runs every minute for every model.
        return this.reportOf(model, experimentId, from, to, 0);
      },
    });
  }

  start(): void {
    this.recorder.start();
    this.alerts.start();
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

  /** The current model version of one of the workspace's experiments: 404 when not its own, 409 when none is published. */
  private async current(scope: Scope, experimentId: number): Promise<ModelRow> {
    const row = await this.deps.models.current(scope.workspace.id, experimentId);
    if (row) return row;
    const status = await this.deps.models.experimentStatus(scope.workspace.id, experimentId);
    if (status === null) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    throw new ModelNotPublished(experimentId, status);
  }

  /** GET /v1/models/{id}/monitoring: what is in the database for [from, to), this replica's unwritten part first written. */
  async report(scope: Scope, experimentId: number, from: Date, to: Date) {
    assertAllowed(scope.workspace, "experiment.read");
    const model = await this.current(scope, experimentId);
    await this.recorder.flush();
    const [report, alerts] = await Promise.all([
      this.reportOf(model, experimentId, from, to),
      this.alerts.forReport(model.experimentUuid, from, to),
    ]);
    return { ...report, alerts };
  }

  private async reportOf(model: ModelRow, experimentId: number, from: Date, to: Date, aucResamples?: number): Promise<MonitoringReport> {
    const [rows, records] = await Promise.all([
      this.repo.aggregates(model.experimentUuid, from, to),
      this.repo.records(model.experimentUuid, from, to, MAX_RECORDS),
    ]);
    const retentionDays = this.deps.config.PREDICTION_RETENTION_DAYS;
    return buildReport({ experimentId, model, from, to, rows, records, retentionDays, aucResamples });
  }

  /** POST /v1/models/{id}/outcomes: checks every row, writes the matched ones, names the unmatched. */
  async postOutcomes(scope: Scope, experimentId: number, rows: OutcomeIn[]) {
    // Outcomes change what the model's monitoring says: the builders' work, as a batch is.
    assertAllowed(scope.workspace, "batch.run");
    const model = await this.current(scope, experimentId);
    const manifest = model.manifest as { problem: string; classes: Array<{ index: number; code: string; name: string }> };
    const outcomes = checkOutcomes(manifest.problem, manifest.classes, rows);
    // Predictions still held in memory here are written first, so an outcome posted at once finds its record.
    await this.recorder.flush();
    const found = await this.repo.label(model.experimentUuid, outcomes);
    const unmatched = outcomes.filter((o) => !found.has(o.requestId)).map((o) => o.requestId);
    return { received: rows.length, matched: found.size, unmatched };
  }

  async close(): Promise<void> {
    clearTimeout(this.purgeTimer);
    this.purgeTimer = undefined;
    await this.alerts.close();
    await this.recorder.close();
  }
}
