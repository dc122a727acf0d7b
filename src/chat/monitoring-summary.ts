import type { ChatExperiment } from "./reads.js";
import type { Scope } from "../workspaces/scope.js";

// What the chat reads of a model's monitoring report (issue 49: "¿cómo va el modelo de mama este mes?"): the few
// figures a clinician asks about, from GET /v1/models/{id}/monitoring's own report (src/monitoring/report.ts), for
// the experiment the resolver picked. Structural types only, so the chat does not depend on monitoring's code.

interface Interval {
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** The part of src/monitoring's report this summary reads. */
export interface MonitoringReportView {
  model_version: number;
  predictions: number;
  decisions: { positive_class: string | null; positive_rate: number | null; baseline_positive_rate: number | null };
  drift: { status: string; features: Array<{ feature: string; severity: string; drifted: boolean }> };
  outcomes: { records: number; labelled: number; coverage: number | null };
  performance: {
    realized: { n: number; sensitivity: Interval; specificity: Interval; auc: Interval };
    estimated: { n: number; sensitivity: number | null; specificity: number | null };
    model_card: { sensitivity: Interval | null; specificity: Interval | null; auc: Interval | null };
  };
}

/** Monitoring as the chat reaches it: the user's own model's report for a period; throws when none is published. */
export interface MonitoringReader {
  report(scope: Scope, experimentId: number, from: Date, to: Date): Promise<MonitoringReportView>;
}

export type MonitoringSummary =
  | { found: false; experiment_id: number }
  | { found: true; experiment_id: number; name: string | null; status: string; days: number; published: false }
  | {
      found: true;
      experiment_id: number;
      name: string | null;
      status: string;
      days: number;
      published: true;
      report: MonitoringReportView;
    };

export async function summarizeMonitoring(
  reader: MonitoringReader | undefined,
  scope: Scope,
  row: ChatExperiment,
  period: { from: Date; to: Date; days: number },
): Promise<MonitoringSummary> {
  const base = { found: true as const, experiment_id: row.experimentId, name: row.name ?? null, status: row.status, days: period.days };
  if (!reader || row.status !== "ready") return { ...base, published: false };
  try {
    const report = await reader.report(scope, row.experimentId, period.from, period.to);
    return { ...base, published: true, report };
  } catch (err) {
    // A ready experiment whose model is not (or no longer) published: said as such, not as an error.
    if (err instanceof Error && err.name === "ModelNotPublished") return { ...base, published: false };
    throw err;
  }
}
