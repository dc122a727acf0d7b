import fs from "node:fs";
import { msg, say, storedMessage } from "../errors.js";
import { DELETING, isTerminal } from "../experiments/state.js";
import type { JobDeps, JobResult, StopReason } from "./deps.js";
import { JobRun } from "./job-run.js";
import type { DeviceSlot } from "./gpu-slots.js";
import { JobLease, JobStop, waitForLease } from "./lease.js";
import { notifyTerminal } from "./notify.js";
import { STAGES, type StageOutcome } from "./stages.js";

/**
 * Runs one experiment from its lease to a terminal state (or until stopped): admit → fetch → validate → train →
 * check → publish (stages.ts), each ending in an explicit outcome. The same code runs in the in-process runner and
 * in BullMQ workers. Every write is conditional on holding the lease, so if another runner took over (this one was
 * presumed dead), this one's writes are refused and it stops.
 */
export async function runExperimentJob(deps: JobDeps, uuid: string, stop: AbortSignal, slot?: DeviceSlot): Promise<JobResult> {
  const row = await waitForLease(deps, uuid, stop);
  if (!row) return "skipped";
  const log = deps.logger.child({ experiment: uuid, experiment_id: row.experimentId, attempt: row.attempts });
  const lease = new JobLease(deps, uuid, stop, log);
  const run = new JobRun(deps, row, lease, log, slot);
  try {
    for (const stage of STAGES) {
      lease.throwIfStopped();
      const outcome = await stage(run);
      if ("end" in outcome) return await end(run, outcome);
    }
    throw new Error("the stages ended without an outcome");
  } catch (err) {
    return await stopOrFail(run, err);
  } finally {
    lease.dispose();
    await close(run);
  }
}

async function end(run: JobRun, outcome: Extract<StageOutcome, { end: unknown }>): Promise<JobResult> {
  await run.move(outcome.end, outcome.set);
  if (outcome.published) run.deps.events.emit("model:published", outcome.published);
  return "finished";
}

/** A stop from outside (cancel: cancelled now; shutdown or a lost lease: left to the next runner), or a failure. */
async function stopOrFail(run: JobRun, err: unknown): Promise<JobResult> {
  const { signal } = run.lease;
  if (err instanceof JobStop || signal.aborted) {
    const why = err instanceof JobStop ? err.why : (signal.reason as StopReason);
    if (why === "cancel") {
      // As in JobRun.move: the log's last line is in place before the status a client polls for.
      await run.writeFinalLog("status cancelled");
      const cancelled = await run.deps.repo.transition(run.uuid, "cancelled", { owner: run.lease.owner });
      if (cancelled) notifyTerminal(run.deps, cancelled);
      else run.jobLog("(cancelled was not recorded: this runner no longer holds the job)");
      return "finished";
    }
    run.jobLog(`stopped (${why}); another runner picks it up`);
    return "stopped";
  }
  run.log.error({ err }, "experiment job failed");
  const text = msg("build.internal_while", { status: run.status, detail: (err as Error).message });
  await run.move("failed", { failureReason: say(text, "en"), failureText: storedMessage(text) }).catch(() => undefined);
  return "finished";
}

/**
 * Ended: the work folder goes (the log's bucket copy was made with the terminal line, JobRun.writeFinalLog; copying
 * it again here could overwrite the copy of the runner that took the job over with this one's stale log).
 * Not ended: the lease is let go for the next runner.
 */
async function close(run: JobRun): Promise<void> {
  const { repo } = run.deps;
  await run.flushLog();
  const after = await repo.byId(run.uuid).catch(() => undefined);
  // Being deleted: its files go too, also on a worker host the deletion cannot reach.
  if (after?.status === DELETING) {
    await fs.promises.rm(run.work, { recursive: true, force: true });
    await fs.promises.rm(run.logFile, { force: true });
    await repo.releaseLease(run.uuid, run.lease.owner).catch(() => undefined);
  } else if (after && isTerminal(after.status)) await fs.promises.rm(run.work, { recursive: true, force: true });
  else await repo.releaseLease(run.uuid, run.lease.owner).catch(() => undefined);
}
