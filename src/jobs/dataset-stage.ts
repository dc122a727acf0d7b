import type { prepareDataset } from "../datasets/prepare.js";

// The datasets area's prepareDataset, loaded lazily so the job code stays importable in a process that never
// prepares data; tests inject a double of the same type.

export type { PreparedDataset } from "../datasets/types.js";
export type PrepareDataset = typeof prepareDataset;

export async function loadPrepareDataset(): Promise<PrepareDataset> {
  return (await import("../datasets/prepare.js")).prepareDataset;
}
