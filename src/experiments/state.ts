// The experiment state machine. Every transition is persisted with its time in `history`.

export const RUNNING_STATUSES = ["fetching", "validating", "training", "evaluating", "publishing"] as const;
export const TERMINAL_STATUSES = ["ready", "invalid_dataset", "failed", "cancelled"] as const;
/**
 * DELETE /v1/experiments/{id} moves an experiment to `deleting` first; no job runs it and no transition leaves it;
 * its row is removed once its files and models are gone (src/experiments/deletion.ts).
 */
export const DELETING = "deleting" as const;
export const STATUSES = ["queued", ...RUNNING_STATUSES, ...TERMINAL_STATUSES, DELETING] as const;

export type RunningStatus = (typeof RUNNING_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type ExperimentStatus = (typeof STATUSES)[number];

export interface HistoryEntry {
  status: ExperimentStatus;
  at: string;
  /** Set when a job was picked up again after its runner died (attempt number). */
  attempt?: number;
  /** Set on entries that record a model version change (the status is unchanged): which, and to what version. */
  event?: ModelVersionEvent;
  version?: number;
}

/** A saved operating point (a new model version) or a rollback (an older version made current again). */
export type ModelVersionEvent = "operating_point_saved" | "model_version_restored" | "input_check_mode_changed";

export interface Progress {
  /** Fraction of the whole experiment, 0..1. */
  fraction: number;
  stage: ExperimentStatus | "preparing" | "exporting";
  /** The pipeline's English. */
  message?: string;
  /** The message's key (pipelines/contract/progress-messages.json): a reader's words are progress:pipeline.<key>. */
  key?: string;
  params?: Record<string, string | number>;
  epoch?: number;
  epochs?: number;
  trial?: number;
  trials?: number;
  best_metric?: number | null;
  eta_s?: number | null;
  updated_at: string;
}

export const isTerminal = (s: string): s is TerminalStatus => (TERMINAL_STATUSES as readonly string[]).includes(s);

/** Where each stage starts on the 0..1 bar; training fills the span up to publishing with the pipeline's own fraction. */
export const STAGE_START: Record<ExperimentStatus, number> = {
  queued: 0,
  fetching: 0.01,
  validating: 0.04,
  training: 0.08,
  evaluating: 0.85,
  publishing: 0.95,
  ready: 1,
  invalid_dataset: 1,
  failed: 1,
  cancelled: 1,
  deleting: 1,
};

/** The pipeline reports its own fraction of the job; map it into [training start, publishing start). */
export function overallFraction(pipelineFraction: number): number {
  const lo = STAGE_START.training;
  const hi = STAGE_START.publishing;
  return Math.min(hi, lo + (hi - lo) * Math.max(0, Math.min(1, pipelineFraction)));
}
