import type { PipelineEvent } from "../contract/types.js";
import { progressWords } from "../contract/progress-messages.js";
import { overallFraction, type Progress } from "../experiments/state.js";
import type { JobRun } from "./job-run.js";

const PROGRESS_WRITE_MS = 500;

/**
 * Where the pipeline's events go: log lines to the job log, progress to the row (at most every 500 ms, and the
 * last one always) and to the event stream, metrics to the event stream; the first evaluating/exporting progress
 * moves a training job to evaluating. Writes are chained in order and flushed before the next transition, so a
 * late progress write never lands on top of a later state.
 */
export function createEventSink(run: JobRun): { onEvent: (ev: PipelineEvent) => void; flush: () => Promise<unknown> } {
  const { repo } = run.deps;
  const owner = run.lease.owner;
  let lastWrite = 0;
  let writes: Promise<unknown> = Promise.resolve();
  const onEvent = (ev: PipelineEvent) => {
    if (ev.type === "log") run.jobLog(`pipeline ${ev.level}: ${ev.message}`);
    if (ev.type === "metric") writes = writes.then(() => repo.addEvent(run.uuid, "metric", ev)).catch(() => undefined);
    if (ev.type !== "progress") return;
    if ((ev.stage === "evaluating" || ev.stage === "exporting") && run.status === "training") {
      run.status = "evaluating"; // set before the write so later events do not race a second transition
      writes = writes.then(() => run.move("evaluating")).catch(() => run.lease.abort("lease_lost"));
    }
    const now = Date.now();
    if (now - lastWrite < PROGRESS_WRITE_MS && ev.progress < 1) return;
    lastWrite = now;
    const progress: Progress = {
      fraction: overallFraction(ev.progress),
      stage: ev.stage,
      message: ev.message,
      ...progressWords(ev.key, ev.params),
      epoch: ev.epoch,
      epochs: ev.epochs,
      trial: ev.trial,
      trials: ev.trials,
      best_metric: ev.best_metric,
      eta_s: ev.eta_s,
      updated_at: new Date().toISOString(),
    };
    writes = writes
      .then(() => repo.setProgress(run.uuid, owner, progress))
      .then(() => repo.addEvent(run.uuid, "progress", progress))
      .catch((err) => run.log.warn({ err }, "progress write failed"));
  };
  return { onEvent, flush: () => writes };
}
