import type { Gpu } from "./gpu-slots.js";

/** `2`, `1x80GB`, `4x24GiB`, `2x40960MiB`: how many GPUs a worker declares, and optionally the memory of each. */
export const SIMULATED_GPUS_FORMAT = /^\s*(\d{1,2})\s*(?:x\s*(\d+(?:\.\d+)?)\s*(GB|GiB|G|MB|MiB|M)\s*)?$/i;

/**
 * The GPUs a worker declares with BUILDER_SIMULATE_GPUS (or `./builder worker --simulate-gpus`) instead of asking
 * nvidia-smi: so that the routing of GPU jobs between workers can be run and tested on hosts without one. They
 * count as GPUs everywhere jobs are placed (the registry, the GPU queue, the slots) but their jobs train on the
 * CPU (gpu-slots.ts trainingDevice), and every place that lists them says "simulated". GB is read as GiB, as
 * nvidia-smi's "80GB" cards report 81559 MiB.
 */
export function simulatedGpus(spec: string): Gpu[] {
  const m = SIMULATED_GPUS_FORMAT.exec(spec);
  if (!m)
    throw new Error(`BUILDER_SIMULATE_GPUS must be a count, optionally with each GPU's memory (2, 1x80GB, 2x40960MiB); got "${spec}"`);
  const count = Number(m[1]);
  const unit = (m[3] ?? "").toUpperCase();
  const memoryMiB = m[2] ? Math.round(Number(m[2]) * (unit.startsWith("G") ? 1024 : 1)) : null;
  return Array.from({ length: count }, (_, i) => ({
    index: String(i),
    id: `simulated-${i}`,
    name: "simulated GPU",
    memoryMiB,
    simulated: true,
  }));
}
