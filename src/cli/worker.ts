import type { Command } from "commander";
import { config } from "../config.js";
import { startBullmqWorker, bullmqSettings } from "../jobs/bullmq.js";
import { newRunnerId } from "../jobs/runner.js";
import { ExperimentRepository } from "../experiments/repository.js";
import { installProcessGuard } from "../process-guard.js";
import { createServices } from "../services.js";
import { registerSlotMetrics } from "../jobs/slot-metrics.js";
import { startWorkerHealth } from "./worker-health.js";

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description("run experiments from the BullMQ queue (REDIS_URL); start one per GPU host")
    .action(async () => {
      const cfg = config();
      if (!cfg.REDIS_URL) {
        process.stderr.write("./builder worker needs REDIS_URL (the queue the API enqueues on with BUILDER_RUNNER=bullmq)\n");
        process.exit(78);
      }
      const services = await createServices(cfg, { runner: false });
      const runnerId = newRunnerId();
      const { stop, slots } = startBullmqWorker({
        config: cfg,
        repo: new ExperimentRepository(services.db),
        bucket: services.bucket,
        logger: services.logger,
        events: services.events,
        runnerId,
      });
      registerSlotMetrics(services.metrics.registry, slots);
      const health = cfg.WORKER_PORT ? await startWorkerHealth(services, slots, cfg.WORKER_PORT) : undefined;
      installProcessGuard(services.logger); // after start-up: see src/process-guard.ts
      services.logger.info(
        {
          runner: runnerId,
          queue: cfg.BULLMQ_QUEUE,
          devices: slots.describe(),
          health_port: cfg.WORKER_PORT || null,
          ...bullmqSettings(cfg),
        },
        "worker is up",
      );
      const shutdown = (signal: string) => {
        services.logger.info({ signal }, "worker shutting down: stopping running jobs (they are re-queued)");
        health?.close();
        stop()
          .then(() => services.close())
          .then(
            () => process.exit(0),
            () => process.exit(1),
          );
      };
      process.once("SIGTERM", () => shutdown("SIGTERM"));
      process.once("SIGINT", () => shutdown("SIGINT"));
    });
}
