import { EventEmitter } from "node:events";
import type { Config } from "./config.js";
import { openDatabase, type Database, type Db } from "./db/client.js";
import { createMetrics, type Metrics } from "./http/metrics.js";
import { createLogger, type Logger } from "./logger.js";
import { createAuth, type Auth } from "./auth/index.js";
import { createBucket, type Bucket } from "./storage/index.js";
import { sql } from "drizzle-orm";
import { ACCOUNT_ERASED_CHANNEL, createServing, type Serving } from "./serving/index.js";
import { ExperimentRepository } from "./experiments/repository.js";
import { ExperimentService } from "./experiments/service.js";
import { createRunner, type JobRunner } from "./jobs/create-runner.js";
import { registerQueueMetrics, registerSlotMetrics } from "./jobs/slot-metrics.js";
import { OperationsService } from "./jobs/operations.js";
import { BullmqDispatcher } from "./jobs/bullmq.js";
import { DatasetService } from "./datasets/service.js";
import { BatchRepository } from "./batches/repository.js";
import { ChatService } from "./chat/service.js";
import { AccountErasure } from "./erasure/account-erasure.js";
import { WorkspaceErasure } from "./erasure/workspace-erasure.js";
import { AuditLog } from "./audit/audit-log.js";
import { AdminService } from "./auth/admin.service.js";
import { OperatingPointService } from "./experiments/operating-point.js";
import { ApprovalService } from "./workspaces/approval.service.js";
import { InputCheckModeService } from "./experiments/input-check-mode.js";
import { BatchService, batchResultsFolder } from "./batches/service.js";
import { PacsAutoScore } from "./pacs/auto-score.js";
import { PacsConnections } from "./pacs/connection.js";
import { PacsImport } from "./pacs/import.js";
import { PacsSendBack } from "./pacs/send-back.js";
import { PacsRepository } from "./pacs/repository.js";
import { SecretBox } from "./pacs/secret-box.js";
import { Monitoring } from "./monitoring/index.js";
import { ModelRepository } from "./serving/model-repository.js";
import { MembersService } from "./workspaces/members.service.js";
import { WorkspaceService } from "./workspaces/workspace.service.js";

/**
 * Everything a request handler may use, built once at start-up. Routes stay thin and call into these
 * services; services call repositories; only repositories touch the database.
 */
export interface Services {
  config: Config;
  logger: Logger;
  database: Database;
  db: Db;
  metrics: Metrics;
  auth: Auth;
  /** Uploaded zips and published models. */
  bucket: Bucket;
  /**
   * In-process notifications between areas without importing each other:
   * "model:published" (the new models row) lets serving warm and swap its cache.
   */
  events: EventEmitter;
  /** Model cache, outbound guard and /predict (src/serving). */
  serving: Serving;
  /** What serving keeps of each prediction, outcomes, drift and alerts (src/monitoring, issue 49). */
  monitoring: Monitoring;
  /** Experiments: create/read/cancel; the runner (in-process device slots or BullMQ dispatcher) runs them. */
  experiments: ExperimentService;
  runner?: JobRunner;
  /** Dataset uploads, validation reports and column listings. */
  datasets: DatasetService;
  /** Batch scoring of a published model: a table of rows or a zip of images, results.csv in the bucket. */
  batches: BatchService;
  /** The chat assistant (src/chat): conversations, tools bound to the caller, builtin or OpenAI-compatible backend. */
  chat: ChatService;
  /** Account erasure (DELETE /v1/me, `./builder users erase`): every experiment, model, dataset, key, session, conversation and log. */
  erasure: AccountErasure;
  /** A shared workspace's deletion (DELETE /v1/workspaces/{id}, owners): crash-safe, as an account's erasure. */
  workspaceErasure: WorkspaceErasure;
  /** Who did what and when (GET /v1/audit): append-only, kept after erasure, no patient data. */
  audit: AuditLog;
  /** Administrators' work (/v1/admin): invitations, disabling accounts, password-reset links, roles. */
  admin: AdminService;
  /** The workspaces a user belongs to (/v1/workspaces): the switcher's list, new ones, renaming (issue 50). */
  workspaces: WorkspaceService;
  /** A workspace's members: list, add or invite by e-mail, change a role, remove (revoking their keys), leave. */
  members: MembersService;
  /** Operating points of binary models: new model versions with other thresholds, and rollback. */
  operatingPoints: OperatingPointService;
  /** A second pair of eyes (issue 50 item 4): a workspace's approval setting and the approval of model versions. */
  approval: ApprovalService;
  inputCheckMode: InputCheckModeService;
  /** The administrators' Operations page: workers, their slots, the queues, the running jobs; draining a worker. */
  operations: OperationsService;
  /** The user's PACS (Settings → PACS): DICOMweb root and sealed credentials, used for links and sending back. */
  pacs: PacsConnections;
  /** Answers written back into the PACS (structured report, secondary capture) by STOW-RS, in the background. */
  pacsSendBack: PacsSendBack;
  /** Datasets built from the PACS (POST /v1/datasets/from-pacs): QIDO-RS, WADO-RS, de-identification, the zip. */
  pacsImport: PacsImport;
  /** Each model's rule for scoring new PACS instances as they arrive, and the poller that follows the PACS's feed. */
  pacsAutoScore: PacsAutoScore;
  /** Work to do at shutdown, in reverse order of registration. */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

/** How often deletions left by a replica that died are looked for (those untouched for as long). */
const DELETION_SWEEP_S = 60;
/** How often accounts marked for erasure are looked for (`./builder users erase` marks one through a running server). */
const ERASURE_SWEEP_S = 10;

/** opts.runner false: no job runner (the `worker` command runs its own BullMQ consumer). */
export async function createServices(config: Config, opts: { logger?: Logger; runner?: boolean } = {}): Promise<Services> {
  // Everything this process creates (uploads, extracted datasets, job logs, PGlite's files, the pipelines'
  // outputs, which inherit it) is readable by Builder's own account only: it is patients' data.
  process.umask(0o077);
  const logger = opts.logger ?? createLogger(config.LOG_LEVEL);
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.dataDir,
    onError: (err) => logger.warn({ err }, "an idle database connection failed; the pool will open a new one"),
  });
  await database.migrate();
  // An erasure killed before its compaction (PGlite): its deleted rows are still readable in the files until done.
  const caughtUp = await database.compactIfDue();
  if (caughtUp) logger.info({ tables: caughtUp.tables.length }, "database compacted: an erasure was cut short before it");
  const closers: Array<() => Promise<void> | void> = [() => database.close()];
  const auth = await createAuth({ config, db: database.db, logger, database });
  closers.push(() => auth.close());
  const bucket = await createBucket(config);
  closers.push(() => bucket.close?.());
  const events = new EventEmitter();
  const experimentRepo = new ExperimentRepository(database.db);
  let runner: JobRunner | undefined;
  // The PACS connections use serving's outbound guard, and serving asks them for a link's credentials.
  const pacsRepo = new PacsRepository(database.db);
  const pacs = new PacsConnections({ repo: pacsRepo, box: SecretBox.fromConfig(config), guard: () => serving.guard });
  const audit = new AuditLog({ db: database.db, logger });
  const monitoring = new Monitoring({ config, db: database.db, logger, models: new ModelRepository(database.db), audit });
  monitoring.start();
  // Written at shutdown after serving has answered its last request (closers run in reverse order).
  closers.push(() => monitoring.close());
  const serving = await createServing({
    authorizationFor: (userId, url) => pacs.authorizationFor(userId, url),
    observe: (m, o) => monitoring.recorder.record({ id: m.row.id, experimentUuid: m.row.experimentUuid, manifest: m.manifest }, o),
    config,
    db: database.db,
    bucket,
    events,
    logger,
    listen: (channel, onNotify, onState) => database.listen(channel, onNotify, onState),
  });
  const pacsSendBack = new PacsSendBack({
    connections: pacs,
    guard: serving.guard,
    audit,
    logger,
    attempts: config.PACS_SEND_ATTEMPTS,
    baseMs: config.PACS_RETRY_BASE_MS,
    maxPixels: config.FETCH_MAX_PIXELS,
    modelName: (workspaceId, experimentId) => pacsRepo.modelName(workspaceId, experimentId),
  });
  const experiments = new ExperimentService({ repo: experimentRepo, runner: () => runner, config, logger, bucket, events });
  const batchRepo = new BatchRepository(database.db);
  const batches = new BatchService({
    repo: batchRepo,
    bucket,
    config,
    logger,
    serving,
    experiments,
    pacs: { connections: pacs, sendBack: pacsSendBack },
  });
  // A deleted experiment's batch results go with it (their rows go by cascade).
  experiments.deletion.derivedFolders = async (row) => {
    const prefix = await experimentRepo.storagePrefixOf(row.workspaceId);
    return prefix ? (await batchRepo.idsOfExperiment(row.id)).map((id) => batchResultsFolder(prefix, { id })) : [];
  };
  await batches.recover();
  const announceErased = async (id: string) => {
    await database.db.execute(sql`select pg_notify(${ACCOUNT_ERASED_CHANNEL}, ${id})`);
  };
  // DELETE /v1/workspaces/{id}: the same steps for a shared workspace, resumed by the account erasure's sweep.
  const workspaceErasure = new WorkspaceErasure({ experiments, bucket, logger, audit, database, announce: announceErased });
  const erasure = new AccountErasure({
    users: auth.users,
    experiments,
    bucket,
    logger,
    audit,
    afterErasure: () => auth.firstRun.ensureCode(),
    database,
    announceErased,
    alsoSweep: () => workspaceErasure.sweep(),
  });
  const chat = await ChatService.create({
    config,
    db: database.db,
    logger,
    monitoring,
  });
  const datasets = new DatasetService({
    bucket,
    config,
    db: database.db,
    logger,
    users: {
      unfinishedUsing: (workspaceId, objectPath) => experimentRepo.unfinishedUsing(workspaceId, objectPath),
      cancel: (scope, n) => experiments.cancel(scope, n),
    },
  });
  const admin = new AdminService({ repo: auth.admins, apiKeys: auth.apiKeys, audit });
  const services: Services = {
    config,
    logger,
    database,
    db: database.db,
    metrics: createMetrics(),
    auth,
    bucket,
    events,
    serving,
    pacs,
    pacsSendBack,
    monitoring,
    experiments,
    datasets,
    pacsImport: new PacsImport({
      connections: pacs,
      guard: () => serving.guard,
      dataDir: config.dataDir,
      maxInstanceBytes: config.FETCH_MAX_BYTES,
      maxPixels: config.FETCH_MAX_PIXELS,
      maxInstances: 5000,
      concurrency: 4,
      store: (scope, objectPath, zip) => datasets.storeZip(scope, objectPath, zip),
    }),
    pacsAutoScore: new PacsAutoScore({
      db: database.db,
      repo: pacsRepo,
      connections: pacs,
      sendBack: pacsSendBack,
      serving: () => serving,
      guard: () => serving.guard,
      audit,
      logger,
      leaseMs: config.PACS_AUTO_SCORE_LEASE_MS,
    }),
    batches,
    chat,
    audit,
    admin,
    workspaces: new WorkspaceService({ db: database.db, audit }),
    members: new MembersService({
      db: database.db,
      apiKeys: auth.apiKeys,
      audit,
      invite: (actor, input) => admin.inviteToWorkspace(actor, input),
    }),
    operatingPoints: new OperatingPointService({ repo: experimentRepo, bucket, audit, warm: (row) => serving.cache.warm(row) }),
    approval: new ApprovalService({ db: database.db, audit, cache: serving.cache }),
    inputCheckMode: new InputCheckModeService({ repo: experimentRepo, audit, warm: (row) => serving.cache.warm(row) }),
    erasure,
    workspaceErasure,
    operations: new OperationsService({
      runner: () => runner,
      repo: experimentRepo,
      emailOf: async (id) => (await auth.users.findById(id))?.email,
    }),
    onClose: (fn) => void closers.push(fn),
    close: async () => {
      for (const fn of closers.reverse()) await fn();
    },
  };
  closers.push(() => services.serving.close());
  // Answers still being sent back to the PACS finish before serving's outbound guard closes (closers run in reverse).
  closers.push(() => pacsSendBack.idle());
  closers.push(() => batches.close());
  if (opts.runner !== false) {
    runner = createRunner({ config, repo: experimentRepo, bucket, logger, events });
    services.runner = runner;
    if (runner.slots) registerSlotMetrics(services.metrics.registry, runner.slots);
    if (runner instanceof BullmqDispatcher) registerQueueMetrics(services.metrics.registry, runner);
    closers.push(() => runner!.stop());
    await runner.start();
    // Deletions a kill cut short are finished now, in the background (their steps are idempotent).
    closers.push(() => services.experiments.deletion.stop());
    closers.push(() => services.erasure.stop());
    closers.push(() => services.workspaceErasure.stop());
    void services.experiments.deletion.startSweep(DELETION_SWEEP_S);
    void services.erasure.startSweep(ERASURE_SWEEP_S);
    // New PACS instances are scored by serving processes only (after the send-back's idle in the closers: it stops first).
    if (config.PACS_AUTO_SCORE_POLL_MS > 0) {
      services.pacsAutoScore.start(config.PACS_AUTO_SCORE_POLL_MS);
      closers.push(() => services.pacsAutoScore.stop());
    }
  }
  return services;
}
