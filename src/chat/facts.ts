import type { Progress } from "../experiments/state.js";
import type { ChatExperiment, ChatModel } from "./reads.js";
import { checkManifest, classNames, type ColumnSpec, type ServedManifest } from "../serving/manifest.js";
import type { DatasetProblem, DatasetReport } from "../datasets/report.js";
import { METRIC_NAMES } from "../contract/types.js";
import { isInternalSplit, warningsOf, worseSubgroups } from "../experiments/warnings.js";
import type { Manifest } from "../contract/types.js";
import { messageFromStore, storedMessage, type StoredMessage } from "../errors.js";

// Plain facts about one experiment or model, read from its rows as the chat reads them (src/chat/reads.ts: bounded,
// the dataset report cut, the manifest without codes): what the tools return and the builtin templates quote.
// Nothing here is invented; a missing value stays null.

export interface MetricValue {
  value: number;
  ci_low: number | null;
  ci_high: number | null;
}

export type Task = "data" | "vision" | "detection";

export function taskOf(row: ChatExperiment): Task {
  const r = row.request as Record<string, unknown>;
  if (r.type_of_experiment === "detection") return "detection";
  return r.task === "vision" ? "vision" : "data";
}

export function metricOf(row: ChatExperiment, name: string): MetricValue | undefined {
  const m = (row.metrics as Record<string, { value?: unknown; ci_low?: unknown; ci_high?: unknown }> | null)?.[name];
  if (!m || typeof m.value !== "number") return undefined;
  return {
    value: m.value,
    ci_low: typeof m.ci_low === "number" ? m.ci_low : null,
    ci_high: typeof m.ci_high === "number" ? m.ci_high : null,
  };
}

/** Every test metric of the row, in the contract's order (jsonb keeps no order of its own). */
export function metricsOf(row: ChatExperiment): Record<string, MetricValue> {
  const out: Record<string, MetricValue> = {};
  const names = Object.keys((row.metrics as object | null) ?? {});
  const rank = (n: string) => (METRIC_NAMES as readonly string[]).indexOf(n) + 1 || 99;
  for (const name of names.sort((a, b) => rank(a) - rank(b))) {
    const m = metricOf(row, name);
    if (m) out[name] = m;
  }
  return out;
}

/** Per-class test metrics by class name (the pipelines key them by class index), for the metrics that have them. */
export function perClassOf(row: ChatExperiment, classes: Record<string, string> | null): Record<string, Record<string, MetricValue>> {
  const out: Record<string, Record<string, MetricValue>> = {};
  const metrics =
    (row.metrics as Record<string, { per_class?: Record<string, { value?: unknown; ci_low?: unknown; ci_high?: unknown }> }> | null) ?? {};
  for (const [name, m] of Object.entries(metrics)) {
    if (!m?.per_class) continue;
    for (const [index, v] of Object.entries(m.per_class)) {
      if (typeof v?.value !== "number") continue;
      (out[name] ??= {})[classes?.[index] ?? index] = {
        value: v.value,
        ci_low: typeof v.ci_low === "number" ? v.ci_low : null,
        ci_high: typeof v.ci_high === "number" ? v.ci_high : null,
      };
    }
  }
  return out;
}

const problem = (p: DatasetProblem) => ({
  code: p.code,
  message: p.message,
  // The catalog words beside the English, so a reply in the reader's language can say the problem in it.
  ...(p.key ? { key: p.key, params: p.params } : {}),
  ...(p.row ? { row: p.row } : {}),
  ...(p.column ? { column: p.column } : {}),
  ...(p.path ? { path: p.path } : {}),
});

/**
 * Why an experiment failed as catalog words (its failure_text: a key and values), for a reply in the reader's
 * language; null when it did not fail or was stored before catalog words (failure_reason's English is all it has).
 */
export function failureTextOf(row: Pick<ChatExperiment, "status" | "failureText">): StoredMessage | null {
  if (row.status !== "failed" && row.status !== "invalid_dataset") return null;
  const text = messageFromStore(row.failureText);
  return text ? storedMessage(text) : null;
}

export function experimentFacts(row: ChatExperiment, model?: ChatModel | null) {
  const req = row.request as Record<string, unknown>;
  const report = row.datasetReport as DatasetReport | null;
  let manifest: ServedManifest | undefined;
  try {
    manifest = model ? checkManifest(model.manifest) : undefined;
  } catch {
    manifest = undefined;
  }
  const s = report?.summary;
  const classes = manifest ? classNames(manifest) : null;
  return {
    found: true as const,
    experiment_id: row.experimentId,
    name: row.name ?? null,
    description: row.description ?? null,
    status: row.status,
    task: taskOf(row),
    study_type: req.study_type as string,
    model_type: req.model_type === 1 ? "regression" : "classification",
    optimization_metric: (req.optimization_metric as string) ?? null,
    label_cols: (req.label_cols as string[]) ?? [],
    history: (row.history as Array<{ status: string; at: string }>) ?? [],
    progress: (row.progress as Progress | null) ?? null,
    failure_reason: row.status === "failed" || row.status === "invalid_dataset" ? row.failureReason : null,
    failure_text: failureTextOf(row),
    metrics: metricsOf(row),
    per_class: perClassOf(row, classes),
    original_metrics: req.study_type === "Retrospective" ? (row.originalMetrics ?? null) : undefined,
    thresholds: manifest?.thresholds ?? null,
    threshold_rule: manifest?.threshold_rule ?? null,
    /** What limits trust in the result (the same list as GET /v1/experiments/{id}); codes and titles carry no user data. */
    warnings: model ? warningsOf(model.manifest, row.datasetReport, isInternalSplit(row.request) ? {} : undefined) : [],
    /** Subgroups the pipeline flagged clearly worse than the rest of the test set (column and label are user data). */
    worse_subgroups: worseSubgroups((model?.manifest as Partial<Manifest> | undefined)?.clinical).map((g) => ({
      column: g.column,
      label: g.label,
      auc: g.auc,
      rest_auc: g.rest_auc ?? null,
    })),
    classes,
    model: model ? { version: model.version, kind: model.kind, published_at: model.createdAt } : null,
    dataset: {
      zip_gcloud: (req.zip_gcloud as string) ?? null,
      valid: report ? report.valid : null,
      rows: s?.rows ?? null,
      patients: s?.patients ?? null,
      images: s?.images ?? null,
      boxes: s?.boxes ?? null,
      class_counts: s?.class_counts ?? null,
      split: s?.split ?? null,
      problem_counts: s?.problem_counts ?? null,
    },
    problems: {
      errors: (report?.errors ?? []).slice(0, 10).map(problem),
      warnings: (report?.warnings ?? []).slice(0, 10).map(problem),
      errors_omitted: Math.max(0, (report?.errors.length ?? 0) - 10) + (report?.errors_omitted ?? 0),
    },
    finished_at: row.finishedAt,
  };
}

export type ExperimentFacts = ReturnType<typeof experimentFacts>;

function exampleValue(c: ColumnSpec): number {
  if (c.type === "categorical") return 0; // a valid code (0..n-1) that names no value
  if (typeof c.min === "number" && typeof c.max === "number") return Number(((c.min + c.max) / 2).toPrecision(4));
  return 0;
}

export function modelFacts(model: ChatModel, publicUrl: string) {
  const m = checkManifest(model.manifest);
  const columns = m.input.columns;
  const message = columns ? columns.map(exampleValue) : "https://pacs.hospital.org/images/123.png";
  const body = JSON.stringify({ message });
  const url = `${publicUrl.replace(/\/+$/, "")}/v1/experiments/${model.experimentId}/predict`;
  return {
    found: true as const,
    experiment_id: model.experimentId,
    version: model.version,
    kind: m.kind,
    problem: m.problem,
    classes: classNames(m),
    thresholds: m.thresholds ?? null,
    inputs: columns
      ? {
          data_cols: columns.map((c) => c.name),
          // A categorical column's values are training data (possibly identifiers): their count only, as GET /v1/models shows.
          // missing: the column had NA-like values in training, and /predict takes null there for an unknown value.
          columns: columns.map((c) => ({
            name: c.name,
            type: c.type,
            // Counted in the database (src/chat/reads.ts): the codes themselves are never read.
            ...(c.type === "categorical" ? { categories: model.categories[c.name] ?? Object.keys(c.codes ?? {}).length } : {}),
            ...(c.missing ? { missing: true, unknown_value: "null" } : {}),
          })),
        }
      : {
          image: { width: m.input.image!.width, height: m.input.image!.height, channels: m.input.image!.channels },
          message:
            "an image URI: https://, http://, data:image/...;base64, data:application/dicom;base64, a DICOMweb instance URL, or gs://<bucket>/<your user id>/...",
        },
    predict_example: `curl -s -X POST ${url} -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d '${body.replace(/'/g, "'\\''")}'`,
    answer_fields:
      m.kind === "detection"
        ? ["boxes", "score", "classification", "classes", "error"]
        : ["prediccion", "score", "classes", "error", ...(m.kind === "vision_classification" ? ["gradients", "columnas", "filas"] : [])],
  };
}
