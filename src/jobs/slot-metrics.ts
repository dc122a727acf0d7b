import client from "prom-client";
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
