import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/typed";
import type { MonitoringReport } from "../../api/types";
import { formatCount, formatDate, formatNumber, formatPercent } from "../../lib/format";
import { ErrorBox } from "../ui";
import { AlertsList } from "./AlertsList";
import { DriftTable } from "./DriftTable";
import { HourlyVolume, ScoreChart } from "./Charts";
import { OutcomesUpload } from "./OutcomesUpload";
import { PerformanceTable } from "./PerformanceTable";

/** The periods offered, in hours. */
const PERIODS = [24, 24 * 7, 24 * 30] as const;

/**
 * The Monitoring tab of a published model (issue 49 item 7; docs/monitoring.md): GET /v1/models/{id}/monitoring for
 * the chosen period, shown as it is — volume, latency, the score against the baseline, the positive-decision rate,
 * unfamiliar inputs, drift (worst first), outcome coverage, realized figures beside the model card's and the estimate
 * (always called one) — and the upload of true outcomes.
 */
export function MonitoringTab({ experimentId }: { experimentId: number }) {
  const { t } = useTranslation("monitoring");
  const [hours, setHours] = useState<number>(24 * 30);
  const [report, setReport] = useState<MonitoringReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    setBusy(true);
    try {
      const to = new Date();
      const from = new Date(to.getTime() - hours * 3_600_000);
      const r = await call("get", "/v1/models/{experiment_id}/monitoring", {
        path: { experiment_id: experimentId },
        query: { from: from.toISOString(), to: to.toISOString() },
      });
      setReport(r);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, [experimentId, hours]);
  useEffect(() => void load(), [load]);

  const r = report;
  return (
    <div className="monitoring" data-testid="monitoring" aria-busy={busy}>
      <div className="filters monitoring-period">
        <label>
          {t("period.label")}
          <select value={hours} onChange={(e) => setHours(Number(e.target.value))} data-testid="monitoring-period">
            {PERIODS.map((h) => (
              <option key={h} value={h}>
                {t(`period.h${h}`)}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="secondary" onClick={() => void load()} disabled={busy}>
          {t("refresh")}
        </button>
      </div>
      <ErrorBox error={error} />
      {r ? (
        <>
          <p className="muted small">{t("period.shown", { from: formatDate(r.from), to: formatDate(r.to), version: r.model_version })}</p>
          <AlertsList experimentId={experimentId} alerts={r.alerts} onChanged={() => void load()} />
          <Summary r={r} />
          <h3>{t("score.title")}</h3>
          <ScoreChart edges={r.score_distribution.edges} window={r.score_distribution.window} baseline={r.score_distribution.baseline} />
          <h3>{t("volume.title")}</h3>
          <HourlyVolume perHour={r.per_hour} />
          <h3>{t("drift.title")}</h3>
          <DriftTable drift={r.drift} />
          <h3>{t("performance.title")}</h3>
          <PerformanceTable r={r} />
          <OutcomesUpload experimentId={experimentId} onPosted={() => void load()} />
          <p className="muted small">{t("retention", { days: r.retention_days })}</p>
        </>
      ) : null}
    </div>
  );
}

function Fact({ label, testId, children }: { label: string; testId: string; children: React.ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd data-testid={testId}>{children}</dd>
    </div>
  );
}

/** The headline figures of the period, each beside what it is compared with. */
function Summary({ r }: { r: MonitoringReport }) {
  const { t } = useTranslation("monitoring");
  const ms = (v: number | null) => (v === null ? "–" : `${formatNumber(v, v < 10 ? 1 : 0)} ms`);
  const d = r.decisions;
  const ic = r.unfamiliar_inputs;
  return (
    <dl className="facts monitoring-facts">
      <Fact label={t("summary.predictions")} testId="monitoring-predictions">
        <strong>{formatCount(r.predictions)}</strong>
      </Fact>
      <Fact label={t("summary.latency")} testId="monitoring-latency">
        <strong>{ms(r.latency_ms.mean)}</strong>{" "}
        <span className="muted small">
          {t("summary.latencyQuantiles", { p50: ms(r.latency_ms.p50_at_most), p95: ms(r.latency_ms.p95_at_most) })}
        </span>
      </Fact>
      {d.positive_class !== null ? (
        <Fact label={t("summary.positiveRate", { name: d.positive_class })} testId="monitoring-positive-rate">
          <strong>{formatPercent(d.positive_rate)}</strong>{" "}
          <span className="muted small">{t("summary.baseline", { value: formatPercent(d.baseline_positive_rate) })}</span>
        </Fact>
      ) : null}
      <Fact label={t("summary.unfamiliar")} testId="monitoring-unfamiliar">
        {ic.checked ? (
          <>
            <strong>{formatPercent(ic.rate)}</strong>{" "}
            <span className="muted small">{t("summary.unfamiliarOf", { n: formatCount(ic.unfamiliar), of: formatCount(ic.checked) })}</span>
          </>
        ) : (
          <span className="muted">{t("summary.unchecked")}</span>
        )}
      </Fact>
      <Fact label={t("summary.coverage")} testId="monitoring-coverage">
        <strong>{formatPercent(r.outcomes.coverage)}</strong>{" "}
        <span className="muted small">
          {t("summary.coverageOf", { n: formatCount(r.outcomes.labelled), of: formatCount(r.outcomes.records) })}
        </span>
      </Fact>
      <Fact label={t("summary.drift")} testId="monitoring-drift-status">
        <span className={`badge drift-${r.drift.status}`}>{t(`drift.status.${r.drift.status}`)}</span>
      </Fact>
    </dl>
  );
}
