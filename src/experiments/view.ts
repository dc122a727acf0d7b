import type { ClinicalSection } from "../contract/types.js";
import type { DatasetReport } from "../datasets/report.js";
import type { Language } from "../i18n/index.js";
import type { ExperimentRow, ModelRow } from "./repository.js";
import { failureCode, failureIn, progressIn, reportIn, warningsIn } from "./view-language.js";
import { isInternalSplit, warningsOf } from "./warnings.js";

/** The headline figure of a study, in this order of preference: AUC, mAP@0.5, RMSE, F1 (macro). */
const HEADLINE = ["auc", "map50", "rmse", "f_macro"] as const;

/**
 * A ready Retrospective study of this experiment's model, as the result page lists it beside the internal figures:
 * its headline figure with the 95% interval, how many patients it tested, and when it finished.
 */
export function retrospectiveStudyView(r: ExperimentRow) {
  const metrics = (r.metrics ?? {}) as Record<string, { value?: unknown; ci_low?: unknown; ci_high?: unknown } | undefined>;
  const name = HEADLINE.find((n) => typeof metrics[n]?.value === "number");
  const m = name ? metrics[name]! : undefined;
  const num = (v: unknown) => (typeof v === "number" ? v : null);
  const summary = (r.datasetReport as { summary?: { patients?: number; rows?: number; images?: number } } | null)?.summary;
  return {
    experiment_id: r.experimentId,
    name: r.name,
    finished_at: r.finishedAt,
    patients: summary?.patients ?? null,
    figure: name && m ? { name, value: num(m.value), ci_low: num(m.ci_low), ci_high: num(m.ci_high) } : null,
  };
}

/**
 * The API shape of an experiment. Metric names are the contract's (auc, f_macro, ...), each {value, ci_low, ci_high}.
 * `retrospectives`: the ready Retrospective studies of this (Builder) experiment's model.
 */
export function experimentView(row: ExperimentRow, model?: ModelRow, retrospectives: ExperimentRow[] = [], lang: Language = "en") {
  const request = row.request as Record<string, unknown>;
  const retrospective = request.study_type === "Retrospective";
  const internalSplit = isInternalSplit(request) ? { retrospectiveStudies: retrospectives.length } : undefined;
  // The published model's test facts: which class is positive, the confusion matrix, and the warnings read from them.
  const clinical = (model?.manifest as { clinical?: ClinicalSection } | undefined)?.clinical;
  return {
    experiment_id: row.experimentId,
    name: row.name,
    description: row.description,
    intended_use: row.intendedUse ?? null,
    user_id: row.userId,
    status: row.status,
    progress: progressIn(row.progress, lang),
    history: row.history,
    request,
    /** How Builder read the request (src/experiments/study.ts): kind, family, metric, threshold_metric, budget. */
    study: row.study ?? null,
    dataset_report: reportIn(row.datasetReport as DatasetReport | null, lang),
    metrics: row.metrics ?? null,
    positive_class: clinical?.positive_class ?? null,
    confusion_matrix: clinical?.confusion_matrix ?? null,
    subgroups: clinical?.subgroups ?? null,
    warnings: model ? warningsIn(warningsOf(model.manifest, row.datasetReport, internalSplit, true), lang) : [],
    ...(retrospective
      ? { original_metrics: row.originalMetrics ?? null, source_experiment_id: request.source_experiment_id }
      : { retrospective_studies: retrospectives.map(retrospectiveStudyView) }),
    ...failureView(row, lang),
    cancel_requested: row.cancelRequested,
    attempts: row.attempts,
    model: model
      ? {
          version: model.version,
          kind: model.kind,
          store_path: model.storePath,
          published_at: model.createdAt,
          // The saved operating point this (current) version serves with; null for the pipeline's own thresholds.
          operating_point: (model.manifest as { operating_point?: unknown }).operating_point ?? null,
        }
      : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    finished_at: row.finishedAt,
  };
}

export function experimentSummary(row: ExperimentRow, lang: Language = "en") {
  const r = row.request as Record<string, unknown>;
  return {
    experiment_id: row.experimentId,
    name: row.name,
    description: row.description,
    status: row.status,
    progress: progressIn(row.progress, lang),
    study_type: r.study_type,
    task: r.task,
    type_of_experiment: r.type_of_experiment,
    ...failureView(row, lang),
    created_at: row.createdAt,
    finished_at: row.finishedAt,
  };
}

/** Why a failed or refused experiment ended, in `lang`, and the catalog code of that reason (null when stored without one). */
function failureView(row: ExperimentRow, lang: Language) {
  const ended = row.status === "failed" || row.status === "invalid_dataset";
  return {
    failure_reason: ended ? failureIn(row.failureText, row.failureReason, lang) : null,
    failure_code: ended ? failureCode(row.failureText) : null,
  };
}
