import type { Command } from "commander";
import { config, type Config } from "../config.js";
import { bullmqSettings, redisConnection } from "../jobs/queues.js";
import { startBullmqWorker, workerSlotPool } from "../jobs/bullmq-worker.js";
import { newRunnerId } from "../jobs/runner.js";
import { WorkerRegistry, type ListedWorker } from "../jobs/worker-registry.js";
import { ExperimentRepository } from "../experiments/repository.js";
import { ApiError } from "../errors.js";
import { installProcessGuard } from "../process-guard.js";
import { createServices } from "../services.js";
import { registerSlotMetrics } from "../jobs/slot-metrics.js";
import { startWorkerHealth } from "./worker-health.js";

const NEEDS_REDIS = "./builder worker needs REDIS_URL (the queue the API enqueues on with BUILDER_RUNNER=bullmq)\n";

export function registerWorker(program: Command): void {
  const worker = program.command("worker").description("run experiments from the BullMQ queues (REDIS_URL), and list or drain workers");
  worker
    .command("start", { isDefault: true })
    .description("run experiments (the default): one per GPU slot from the GPU queue, one per CPU slot from the CPU queue")
    .option("--simulate-gpus <gpus>", "declare GPUs instead of asking nvidia-smi, for tests of routing: 1, 2x80GB (they train on the CPU)")
    .action(async (opts: { simulateGpus?: string }) => {
      // The flag is the variable's other spelling: checked by the same schema, with the rest of the configuration.
      if (opts.simulateGpus) process.env.BUILDER_SIMULATE_GPUS = opts.simulateGpus;
      const cfg = config();
      if (!cfg.REDIS_URL) {
        process.stderr.write(NEEDS_REDIS);
        process.exit(78);
      }
      await runWorker(cfg);
    });
  worker
    .command("list")
    .description("the workers of this queue: state, GPUs, busy slots, last heartbeat")
    .option("--json", "print the registry's records as JSON")
    .action((opts: { json?: boolean }) =>
      withRegistry(async (registry) => {
        const workers = await registry.list();
        process.stdout.write(opts.json ? `${JSON.stringify(workers, null, 2)}\n` : listText(workers));
      }),
    );
  worker
    .command("drain <worker>")
    .description("a worker (its id, or a host name: every worker there) finishes what it runs and takes nothing new")
    .option("--wait", "return once every worker named is drained (or gone): for scripts that stop it next")
    .action((target: string, opts: { wait?: boolean }) =>
      withRegistry(async (registry) => {
        const named = await registry.drain(target);
        process.stdout.write(`${named.map((w) => `draining ${w.id}`).join("\n")}\n`);
        if (opts.wait) await untilDrained(registry, new Set(named.map((w) => w.id)));
      }),
    );
  worker
    .command("resume <worker>")
    .description("a drained or draining worker (its id, or a host name) takes jobs again")
    .action((target: string) =>
      withRegistry(async (registry) => {
        const named = await registry.resume(target);
        process.stdout.write(`${named.map((w) => `resumed ${w.id}`).join("\n")}\n`);
      }),
    );
}

async function runWorker(cfg: Config): Promise<void> {
  const services = await createServices(cfg, { runner: false });
  const runnerId = newRunnerId();
  const running = await startBullmqWorker(
    {
      config: cfg,
      repo: new ExperimentRepository(services.db),
      bucket: services.bucket,
      logger: services.logger,
      events: services.events,
      runnerId,
    },
    workerSlotPool(cfg),
  );
  const { slots } = running;
  registerSlotMetrics(services.metrics.registry, slots);
  const health = cfg.WORKER_PORT ? await startWorkerHealth(services, slots, cfg.WORKER_PORT) : undefined;
  installProcessGuard(services.logger); // after start-up: see src/process-guard.ts
  services.logger.info(
    {
      runner: runnerId,
      queue: cfg.BULLMQ_QUEUE,
      consumes: running.consumes,
      devices: slots.describe(),
      ...(cfg.BUILDER_SIMULATE_GPUS ? { simulated_gpus: cfg.BUILDER_SIMULATE_GPUS } : {}),
      health_port: cfg.WORKER_PORT || null,
      ...bullmqSettings(cfg),
    },
    cfg.BUILDER_SIMULATE_GPUS ? "worker is up (with simulated GPUs: their jobs train on the CPU)" : "worker is up",
  );
  const shutdown = (signal: string) => {
    services.logger.info({ signal }, "worker shutting down: stopping running jobs (they are re-queued)");
    health?.close();
    running
      .stop()
      .then(() => services.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}

/** list, drain and resume need only Redis: they work from any host with the workers' REDIS_URL and BULLMQ_QUEUE. */
async function withRegistry(fn: (registry: WorkerRegistry) => Promise<void>): Promise<void> {
  const cfg = config();
  if (!cfg.REDIS_URL) {
    process.stderr.write(NEEDS_REDIS);
    process.exit(78);
  }
  const connection = redisConnection(cfg.REDIS_URL);
  try {
    await fn(new WorkerRegistry(connection, cfg.BULLMQ_QUEUE, cfg.JOB_LEASE_S * 1000));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    process.exitCode = err.status === 404 ? 2 : 1;
  } finally {
    await connection.quit().catch(() => undefined);
  }
}

/** Polls the registry until none of `ids` is still active or draining (drained, stopped, lost or forgotten). */
async function untilDrained(registry: WorkerRegistry, ids: Set<string>): Promise<void> {
  for (;;) {
    const busy = (await registry.list()).filter((w) => ids.has(w.id) && (w.status === "active" || w.status === "draining"));
    if (!busy.length) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  process.stdout.write(`drained: ${[...ids].join(", ")}\n`);
}

function listText(workers: ListedWorker[]): string {
  if (!workers.length) return "no worker has been heard from in the last 10 minutes\n";
  return `${workers
    .map((w) => {
      const gpus = w.gpus.length
        ? w.gpus
            .map((g) => `${g.name}${g.memory_mib ? ` ${Math.round(g.memory_mib / 1024)} GiB` : ""}${g.simulated ? " (simulated)" : ""}`)
            .join(", ")
        : "no GPU";
      const busy = (device: "cuda" | "cpu") => {
        const of = w.slots.filter((s) => s.device === device);
        return of.length ? `${device === "cuda" ? "GPU" : "CPU"} ${of.filter((s) => s.busy).length}/${of.length}` : "";
      };
      const slots = [busy("cuda"), busy("cpu")].filter(Boolean).join(", ");
      const seen = Math.round((Date.now() - Date.parse(w.heartbeat_at)) / 1000);
      return `${w.id}  ${w.status}${w.drain_requested && w.status === "active" ? " (drain asked)" : ""}  ${gpus}  slots busy: ${slots}  last heartbeat ${seen} s ago`;
    })
    .join("\n")}\n`;
}
