import { useTranslation } from "react-i18next";
import type { MonitoringReport } from "../../api/types";
import { formatCount, formatNumber, formatPercent } from "../../lib/format";

type Drift = MonitoringReport["drift"];

/**
 * The drift table as the API orders it (the worst first): per input column, image descriptor, component of the image
 * features (the network's own view of the image, kind "features") and the score, the test
 * used, its statistic and p-value, the PSI, the sample it saw beside the baseline's, and a severity. On a phone each
 * row is a small card (the `stacked` table style), so nothing scrolls sideways.
 */
export function DriftTable({ drift }: { drift: Drift }) {
  const { t } = useTranslation("monitoring");
  if (drift.status === "no_baseline") return <p className="muted">{t("drift.noBaseline")}</p>;
  const name = (f: Drift["features"][number]) =>
    f.kind === "score"
      ? t("drift.score")
      : f.kind === "column"
        ? f.feature
        : f.kind === "features"
          ? t("drift.featureComponent", { n: /(\d+)$/.exec(f.feature)?.[1] ?? f.feature })
          : // nsSeparator off: the names hold a colon (img:width, det:boxes), which i18next would read as a namespace.
            t(`drift.descriptor.${f.feature}`, { defaultValue: f.feature, nsSeparator: false });
  const cols = [t("drift.test"), t("drift.statistic"), t("drift.pValue"), t("drift.psi"), t("drift.n"), t("drift.severity")];
  return (
    <>
      <p className="muted small">{t("drift.intro", { n: formatCount(drift.baseline_n) })}</p>
      <div className="table-wrap" tabIndex={0} role="region" aria-label={t("drift.title")}>
        <table className="stacked" data-testid="drift-table">
          <thead>
            <tr>
              <th scope="col">{t("drift.feature")}</th>
              {cols.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {drift.features.map((f) => (
              <tr key={`${f.kind}:${f.feature}`} data-testid={`drift-row-${f.feature}`} className={f.drifted ? "drifted" : undefined}>
                <th scope="row">
                  {name(f)}
                  {f.kind === "descriptor" && f.feature.startsWith("img:") ? (
                    <span className="muted small"> {t("drift.imageDescriptor")}</span>
                  ) : null}
                  {f.missing_rate ? (
                    <div className="muted small">
                      {t("drift.missing", { rate: formatPercent(f.missing_rate), baseline: formatPercent(f.baseline_missing_rate ?? 0) })}
                    </div>
                  ) : null}
                </th>
                <td data-label={cols[0]}>{f.test ? t(`drift.tests.${f.test}`) : "–"}</td>
                <td data-label={cols[1]}>{formatNumber(f.statistic)}</td>
                <td data-label={cols[2]}>{formatNumber(f.p_value)}</td>
                <td data-label={cols[3]}>{formatNumber(f.psi)}</td>
                <td data-label={cols[4]}>{t("drift.nOf", { n: formatCount(f.n), of: formatCount(f.baseline_n) })}</td>
                <td data-label={cols[5]}>
                  <span className={`badge sev-${f.severity}`} data-testid={`drift-severity-${f.feature}`}>
                    {t(`severity.${f.severity}`)}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
