import type { Metrics, Model } from "../api/types";
import { Interval } from "./ui";

const LABELS: Record<string, string> = {
  auc: "AUC",
  f_macro: "F1 (macro average over classes)",
  precision: "Precision (macro average over classes)",
  recall: "Recall (macro average over classes)",
  accuracy: "Accuracy",
  ece: "Calibration error (ECE, lower is better)",
  mae: "Mean absolute error",
  rmse: "Root mean squared error",
  r2: "R²",
  map50: "mAP@0.5",
  map50_95: "mAP@0.5:0.95",
  calibration_slope: "Calibration slope (1 is ideal; below 1: risks too extreme)",
  calibration_intercept: "Calibration intercept (0 is ideal; below 0: risks too high)",
};

const CLINICAL: Record<string, string> = {
  sensitivity: "Sensitivity",
  specificity: "Specificity",
  ppv: "PPV (positive predictive value)",
  npv: "NPV (negative predictive value)",
  prevalence: "Prevalence",
};
/** The clinical figures first, in the order a diagnostic accuracy table reads; then the rest as the pipeline wrote them. */
const ORDER = ["auc", "sensitivity", "specificity", "ppv", "npv", "prevalence"];
const SHORT: Record<string, string> = {
  sensitivity: "Sensitivity",
  specificity: "Specificity",
  ppv: "PPV",
  npv: "NPV",
  prevalence: "Prevalence",
  f_macro: "F1",
};
const PER_CLASS_ORDER = [...ORDER, "f_macro", "precision", "recall"];

/** A metric's row label: binary clinical figures name the positive class; otherwise they are macro averages, and say so. */
function label(name: string, positiveName: string | null | undefined): string {
  if (CLINICAL[name])
    return positiveName ? `${CLINICAL[name]} for ${positiveName}` : `${CLINICAL[name]} (macro average, one class against the rest)`;
  return LABELS[name] ?? name;
}

/** Test metrics with 95% intervals, optionally beside a second set (a Retrospective study's source model). */
export function MetricsTable({
  metrics,
  compare,
  compareLabel,
  caption,
  positiveName,
}: {
  metrics: Metrics;
  compare?: Metrics | null;
  compareLabel?: string;
  caption: string;
  positiveName?: string | null;
}) {
  const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  const names = Object.keys(metrics)
    // An undefined clinical figure (PPV when no patient was called positive) stays as a row showing "–": its absence is a finding.
    // So does an undefined calibration slope: the scores separate the test classes perfectly (the fit runs to infinity).
    .filter((k) => metrics[k]?.value !== null || compare?.[k] || k in CLINICAL || k === "calibration_slope")
    .sort((a, b) => rank(a) - rank(b));
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
              <th scope="row">
                {label(k, positiveName)}
                {k === "calibration_slope" && metrics[k]?.value === null
                  ? " — undefined: the scores separate the test classes perfectly"
                  : null}
              </th>
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
  // Per class, recall is that class's sensitivity and precision its PPV: shown once, under the clinical names.
  const same: Record<string, string> = { recall: "sensitivity", precision: "ppv" };
  const rank = (k: string) => (PER_CLASS_ORDER.includes(k) ? PER_CLASS_ORDER.indexOf(k) : PER_CLASS_ORDER.length);
  const withPer = Object.entries(metrics)
    .filter(([k, v]) => v?.per_class && Object.keys(v.per_class).length && !(same[k] && metrics[same[k]]?.per_class))
    .sort(([a], [b]) => rank(a) - rank(b));
  if (!withPer.length) return null;
  const classKeys = [...new Set(withPer.flatMap(([, v]) => Object.keys(v.per_class!)))];
  const name = (k: string) => classes?.[k] ?? k;
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label="Per-class metrics" data-testid="per-class">
        <caption>Per class, one against the rest (95% interval)</caption>
        <thead>
          <tr>
            <th scope="col">Class</th>
            {withPer.map(([m]) => (
              <th scope="col" key={m}>
                {SHORT[m] ?? (LABELS[m] ?? m).replace(" (macro average over classes)", "")}
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
