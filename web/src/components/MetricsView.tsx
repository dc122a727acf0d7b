import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { Metrics, Model } from "../api/types";
import { Interval } from "./ui";

/** The clinical figures (result:metric.clinical.*). */
const CLINICAL = new Set(["sensitivity", "specificity", "ppv", "npv", "prevalence"]);
/** The clinical figures first, in the order a diagnostic accuracy table reads; then the rest as the pipeline wrote them. */
const ORDER = ["auc", "sensitivity", "specificity", "ppv", "npv", "prevalence"];
/** Per-class column headings (result:metric.short.*). */
const SHORT = new Set(["sensitivity", "specificity", "ppv", "npv", "prevalence", "f_macro"]);
const PER_CLASS_ORDER = [...ORDER, "f_macro", "precision", "recall"];

/** A metric's row label: binary clinical figures name the positive class; otherwise they are macro averages, and say so. */
function label(t: TFunction<"result">, name: string, positiveName: string | null | undefined): string {
  if (CLINICAL.has(name)) {
    const clinical = t(`metric.clinical.${name}`);
    return positiveName ? t("metric.forClass", { metric: clinical, name: positiveName }) : t("metric.macroOneVsRest", { metric: clinical });
  }
  // A metric without a row label in the catalog (result:metric.label.*) shows its name.
  return t(`metric.label.${name}`, { defaultValue: name });
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
  const { t } = useTranslation("result");
  const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);
  const names = Object.keys(metrics)
    // An undefined clinical figure (PPV when no patient was called positive) stays as a row showing "–": its absence is a finding.
    // So does an undefined calibration slope: the scores separate the test classes perfectly (the fit runs to infinity).
    .filter((k) => metrics[k]?.value !== null || compare?.[k] || CLINICAL.has(k) || k === "calibration_slope")
    .sort((a, b) => rank(a) - rank(b));
  return (
    <div className="table-wrap" tabIndex={0}>
      <table aria-label={caption} data-testid="metrics">
        <caption>{t("metric.caption", { caption })}</caption>
        <thead>
          <tr>
            <th scope="col">{t("metric.metric")}</th>
            <th scope="col">{compare ? t("metric.thisData") : t("metric.value")}</th>
            {compare ? <th scope="col">{compareLabel ?? t("metric.internalTest")}</th> : null}
          </tr>
        </thead>
        <tbody>
          {names.map((k) => (
            <tr key={k}>
              <th scope="row">
                {label(t, k, positiveName)}
                {k === "calibration_slope" && metrics[k]?.value === null ? ` — ${t("metric.slopeUndefined")}` : null}
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
  const { t } = useTranslation("result");
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
      <table aria-label={t("metric.perClass")} data-testid="per-class">
        <caption>{t("metric.perClassCaption")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("inputs.class")}</th>
            {withPer.map(([m]) => (
              <th scope="col" key={m}>
                {SHORT.has(m)
                  ? t(`metric.short.${m}`)
                  : t(`metric.short.${m}`, { defaultValue: t(`metric.label.${m}`, { defaultValue: m }) })}
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
