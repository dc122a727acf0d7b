import type { ExperimentRow } from "../experiments/repository.js";
import { isTerminal } from "../experiments/state.js";
import type { Logger } from "../logger.js";
import type { JobDeps, StopReason } from "./deps.js";

/**
 * Every second (more often for leases under 4 s): one small UPDATE per running job. The beat also brings a cancel
 * posted to another process (BullMQ workers), so it must be well inside the 5 s a cancel is allowed.
 */
const HEARTBEAT_MS = (leaseS: number) => Math.max(200, Math.min(1000, (leaseS * 1000) / 4));

/** Thrown to leave the stages when the job was stopped from outside, or a write was refused (the lease is gone). */
export class JobStop extends Error {
  constructor(public readonly why: StopReason | "refused") {
    super(why);
  }
}

/**
 * Takes the experiment's lease, waiting while another live runner holds it (the queue may hand a job out twice
 * after a stall; the lease makes sure only one runs it). Null when it reached a terminal state meanwhile.
 */
export async function waitForLease(deps: JobDeps, uuid: string, stop: AbortSignal): Promise<ExperimentRow | null> {
  for (;;) {
    const row = await deps.repo.acquireLease(uuid, deps.runnerId, deps.config.JOB_LEASE_S);
    if (row) return row;
    const current = await deps.repo.byId(uuid);
    if (!current || isTerminal(current.status) || stop.aborted) return null;
    await new Promise((r) => setTimeout(r, Math.min(1000, deps.config.JOB_LEASE_S * 250)));
  }
}

/**
 * The held lease: a heartbeat that renews it and carries cancellation from the API (which may be another
 * process), merged with the runner's own stop signal into one signal the stages and the pipeline watch.
 */
export class JobLease {
  private readonly local = new AbortController();
  private readonly beat: NodeJS.Timeout;
  private readonly onOuterStop = () => this.local.abort(this.outer.reason ?? "shutdown");

  constructor(
    private readonly deps: JobDeps,
    readonly uuid: string,
    private readonly outer: AbortSignal,
    log: Logger,
  ) {
    if (outer.aborted) this.onOuterStop();
    else outer.addEventListener("abort", this.onOuterStop, { once: true });
    const leaseS = deps.config.JOB_LEASE_S;
    // The beat catches its own errors, so the timer has no promise to watch.
    this.beat = setInterval(
      () =>
        void (async () => {
          try {
            const r = await deps.repo.renewLease(uuid, deps.runnerId, leaseS);
            if (!r) this.local.abort("lease_lost");
            else if (r.cancelRequested) this.local.abort("cancel");
          } catch (err) {
            log.warn({ err }, "lease heartbeat failed");
          }
        })(),
      HEARTBEAT_MS(leaseS),
    );
  }

  get owner(): string {
    return this.deps.runnerId;
  }

  get signal(): AbortSignal {
    return this.local.signal;
  }

  abort(why: StopReason): void {
    this.local.abort(why);
  }

  throwIfStopped(): void {
    if (this.signal.aborted) throw new JobStop(this.signal.reason as StopReason);
  }

  /** Stops the heartbeat; the lease itself is released (or left to expire with the terminal row) by the caller. */
  dispose(): void {
    clearInterval(this.beat);
    this.outer.removeEventListener("abort", this.onOuterStop);
  }
}
