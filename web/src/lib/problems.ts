import type { TFunction } from "i18next";
import type { DatasetProblem, DatasetReport } from "../api/types";

// The dataset report as a person reads it: one table of errors then warnings, each with where (row, column,
// path) and what; problems of one code are grouped so a frequent fault does not hide a rarer one.

export interface ProblemRow extends DatasetProblem {
  /** How many problems of this code were found in all (the lists are capped; problem_counts has the total). */
  total: number;
}

export function problemRows(report: Pick<DatasetReport, "errors" | "warnings" | "summary">): ProblemRow[] {
  const counts = (report.summary.problem_counts ?? {}) as Record<string, number>;
  const order = (p: DatasetProblem) =>
    [p.severity === "error" ? 0 : 1, p.code, p.row ?? Number.MAX_SAFE_INTEGER, p.column ?? "", p.path ?? ""] as const;
  return [...report.errors, ...report.warnings]
    .map((p) => ({ ...p, total: counts[p.code] ?? 1 }))
    .sort((a, b) => {
      const x = order(a),
        y = order(b);
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
      return 0;
    });
}

/** "3 errors, 1 warning (12 more not listed)"; in the dashboard's language with the dataset namespace's `t`. */
export function problemHeadline(
  report: Pick<DatasetReport, "errors" | "warnings" | "errors_omitted" | "warnings_omitted">,
  t?: TFunction<"dataset">,
): string {
  if (t) {
    const head = t("report.headline", {
      errors: t("report.errors", { count: report.errors.length + report.errors_omitted }),
      warnings: t("report.warnings", { count: report.warnings.length + report.warnings_omitted }),
    });
    const omitted = report.errors_omitted + report.warnings_omitted;
    return omitted ? t("report.headlineOmitted", { head, count: omitted }) : head;
  }
  const n = (k: number, w: string) => `${k} ${w}${k === 1 ? "" : "s"}`;
  const omitted = report.errors_omitted + report.warnings_omitted;
  const head = `${n(report.errors.length + report.errors_omitted, "error")}, ${n(report.warnings.length + report.warnings_omitted, "warning")}`;
  return omitted ? `${head} (${omitted} more not listed)` : head;
}
