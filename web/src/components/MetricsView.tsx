import type { Metrics, Model } from "../api/types";
import { Interval } from "./ui";

const LABELS: Record<string, string> = {
  auc: "AUC",
  f_macro: "F1 (macro)",
  precision: "Precision",
  recall: "Recall (sensitivity)",
  accuracy: "Accuracy",
  ece: "Calibration error (ECE, lower is better)",
  mae: "Mean absolute error",
  rmse: "Root mean squared error",
  r2: "R²",
  map50: "mAP@0.5",
  map50_95: "mAP@0.5:0.95",
};

/** Test metrics with 95% intervals, optionally beside a second set (a Retrospective study's source model). */
export function MetricsTable({ metrics, compare, compareLabel, caption }: { metrics: Metrics; compare?: Metrics | null; compareLabel?: string; caption: string }) {
  const names = Object.keys(metrics).filter((k) => metrics[k]?.value !== null || compare?.[k]);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label={caption} data-testid="metrics">
        <caption>{caption} (95% interval)</caption>
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col">{compare ? "This data" : "Value"}</th>
            {compare ? <th scope="col">{compareLabel ?? "Internal test"}</th> : null}
          </tr>
        </thead>
        <tbody>
          {names.map((k) => (
            <tr key={k}>
              <th scope="row">{LABELS[k] ?? k}</th>
              <td>
                <Interval v={metrics[k]} />
              </td>
              {compare ? (
                <td>
                  <Interval v={compare[k]} />
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One row per class, one column per metric that has per-class values. */
export function PerClassTable({ metrics, classes }: { metrics: Metrics; classes?: Model["classes"] }) {
  const withPer = Object.entries(metrics).filter(([, v]) => v?.per_class && Object.keys(v.per_class).length);
  if (!withPer.length) return null;
  const classKeys = [...new Set(withPer.flatMap(([, v]) => Object.keys(v.per_class!)))];
  const name = (k: string) => classes?.[k] ?? k;
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label="Per-class metrics" data-testid="per-class">
        <caption>Per class (95% interval)</caption>
        <thead>
          <tr>
            <th scope="col">Class</th>
            {withPer.map(([m]) => (
              <th scope="col" key={m}>
                {LABELS[m] ?? m}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {classKeys.map((c) => (
            <tr key={c}>
              <th scope="row">{name(c)}</th>
              {withPer.map(([m, v]) => (
                <td key={m}>
                  <Interval v={v.per_class![c]} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
