import { EventEmitter } from "node:events";
import type { Config } from "./config.js";
import { openDatabase, type Database, type Db } from "./db/client.js";
import { createMetrics, type Metrics } from "./http/metrics.js";
import { createLogger, type Logger } from "./logger.js";
import { createAuth, type Auth } from "./auth/index.js";
import { createBucket, type Bucket } from "./storage/index.js";
import { createServing, type Serving } from "./serving/index.js";
import { ExperimentRepository } from "./experiments/repository.js";
import { ExperimentService } from "./experiments/service.js";
import { createRunner, type JobRunner } from "./jobs/create-runner.js";
import { registerSlotMetrics } from "./jobs/slot-metrics.js";
import { DatasetService } from "./datasets/service.js";
import { BatchRepository } from "./batches/repository.js";
import { BatchService } from "./batches/service.js";
import { ChatService } from "./chat/service.js";
import { ModelRepository } from "./serving/model-repository.js";

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
  /** Experiments: create/read/cancel; the runner (in-process device slots or BullMQ dispatcher) runs them. */
  experiments: ExperimentService;
  runner?: JobRunner;
  /** Dataset uploads, validation reports and column listings. */
  datasets: DatasetService;
  /** Batch scoring of a published model: a table of rows or a zip of images, results.csv in the bucket. */
  batches: BatchService;
  /** The chat assistant (src/chat): conversations, tools bound to the caller, builtin or OpenAI-compatible backend. */
  chat: ChatService;
  /** Work to do at shutdown, in reverse order of registration. */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}

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
  const closers: Array<() => Promise<void> | void> = [() => database.close()];
  const auth = await createAuth({ config, db: database.db, logger, database });
  closers.push(() => auth.close());
  const bucket = await createBucket(config);
  const events = new EventEmitter();
  const experimentRepo = new ExperimentRepository(database.db);
  let runner: JobRunner | undefined;
  const serving = createServing({ config, db: database.db, bucket, events, logger });
  const experiments = new ExperimentService({ repo: experimentRepo, runner: () => runner, config, logger, bucket });
  const batches = new BatchService({ repo: new BatchRepository(database.db), bucket, config, logger, serving, experiments });
  await batches.recover();
  const chat = await ChatService.create({ config, db: database.db, experiments: experimentRepo, models: new ModelRepository(database.db), logger });
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
    experiments,
    datasets: new DatasetService({ bucket, config, db: database.db, logger }),
    batches,
    chat,
    onClose: (fn) => void closers.push(fn),
    close: async () => {
      for (const fn of closers.reverse()) await fn();
    },
  };
  closers.push(() => services.serving.close());
  if (opts.runner !== false) {
    runner = createRunner({ config, repo: experimentRepo, bucket, logger, events });
    services.runner = runner;
    if (runner.slots) registerSlotMetrics(services.metrics.registry, runner.slots);
    closers.push(() => runner!.stop());
    await runner.start();
  }
  return services;
}
