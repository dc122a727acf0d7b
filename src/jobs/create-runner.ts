import type { JobDeps } from "./deps.js";
import { BullmqDispatcher } from "./bullmq.js";
import { InProcessRunner, newRunnerId, type JobRunner } from "./runner.js";

export type { JobRunner };

/** BUILDER_RUNNER=inprocess (default): jobs run inside serve. bullmq: serve only enqueues for `./builder worker`. */
export function createRunner(deps: Omit<JobDeps, "runnerId">): JobRunner {
  if (deps.config.BUILDER_RUNNER === "bullmq") return new BullmqDispatcher(deps);
  return new InProcessRunner({ ...deps, runnerId: newRunnerId() });
}
