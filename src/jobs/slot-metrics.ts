import client from "prom-client";
import type { BullmqDispatcher } from "./bullmq.js";
import type { SlotPool } from "./gpu-slots.js";

/**
 * Prometheus series for a runner's device slots: one `builder_device_slot_busy` per slot (1 while a job runs in
 * it), labelled with its device and GPU, so an operator sees which GPUs each worker uses and how busy they are.
 */
export function registerSlotMetrics(registry: client.Registry, pool: SlotPool): void {
  new client.Gauge({
    name: "builder_device_slot_busy",
    help: "1 while a training job runs in this device slot (slot, device cuda|cpu, gpu index and name)",
    labelNames: ["slot", "device", "gpu", "gpu_name"] as const,
    registers: [registry],
    collect() {
      for (const s of pool.describe()) {
        this.set({ slot: String(s.slot), device: s.device, gpu: s.gpu?.index ?? "", gpu_name: s.gpu?.name ?? "" }, s.busy ? 1 : 0);
      }
    },
  });
}

/**
 * The API's series in BUILDER_RUNNER=bullmq: `builder_queue_jobs{need,state}` (waiting or active jobs in the GPU
 * and CPU queues) and `builder_workers{status}` (workers by state, lost ones included), read from Redis at each
 * scrape. A scrape while Redis is down leaves them out rather than failing /metrics.
 */
export function registerQueueMetrics(registry: client.Registry, dispatcher: BullmqDispatcher): void {
  new client.Gauge({
    name: "builder_queue_jobs",
    help: "training jobs in the BullMQ queue of what they need (need gpu|cpu), waiting or active",
    labelNames: ["need", "state"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const depths = await dispatcher.depths().catch(() => []);
      for (const d of depths) {
        this.set({ need: d.need, state: "waiting" }, d.waiting);
        this.set({ need: d.need, state: "active" }, d.active);
      }
    },
  });
  new client.Gauge({
    name: "builder_workers",
    help: "BullMQ workers in the registry by status (active, draining, drained, lost, stopped)",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const workers = await dispatcher.registry.list().catch(() => null);
      if (!workers) return;
      for (const status of ["active", "draining", "drained", "lost", "stopped"] as const)
        this.set({ status }, workers.filter((w) => w.status === status).length);
    },
  });
}
