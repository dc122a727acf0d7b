import { useTranslation } from "react-i18next";
import type { MonitoringReport } from "../../api/types";
import { formatCount, formatNumber } from "../../lib/format";
import { Interval } from "../ui";

const METRICS = ["sensitivity", "specificity", "ppv", "npv", "auc", "accuracy"] as const;

/**
 * Realized figures (from the predictions that have a true outcome, with 95% intervals) beside the model card's test
 * figures, and the estimate for the predictions still without one, which is always called an estimate.
 */
export function PerformanceTable({ r }: { r: MonitoringReport }) {
  const { t } = useTranslation("monitoring");
  const p = r.performance;
  if (r.decisions.positive_class === null) return <p className="muted">{t("performance.binaryOnly")}</p>;
  const cols = [
    t("performance.realized", { n: formatCount(p.realized.n) }),
    t("performance.modelCard"),
    t("performance.estimated", { n: formatCount(p.estimated.n) }),
  ];
  return (
    <>
      <p className="muted small">{t("performance.intro", { name: r.decisions.positive_class })}</p>
      <div className="table-wrap" tabIndex={0} role="region" aria-label={t("performance.title")}>
        <table className="stacked" data-testid="performance-table">
          <thead>
            <tr>
              <th scope="col">{t("performance.metric")}</th>
              {cols.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {METRICS.map((m) => {
              const est = m === "auc" ? null : p.estimated[m];
              return (
                <tr key={m}>
                  <th scope="row">{t(`performance.metrics.${m}`)}</th>
                  <td data-label={cols[0]} data-testid={`realized-${m}`}>
                    <Interval v={p.realized[m]} />
                  </td>
                  <td data-label={cols[1]} data-testid={`card-${m}`}>
                    <Interval v={p.model_card[m] ?? undefined} />
                  </td>
                  <td data-label={cols[2]} data-testid={`estimated-${m}`}>
                    {est === null ? (
                      <span className="muted">–</span>
                    ) : (
                      <span>
                        {formatNumber(est)} <span className="badge estimate">{t("performance.estimate")}</span>
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <p className="muted small">{t("performance.estimateNote")}</p>
    </>
  );
}
