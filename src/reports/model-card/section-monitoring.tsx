import type { ModelCard } from "../../experiments/model-card.js";
import { featureComponent } from "../../monitoring/baseline.js";
import type { MonitoringReport } from "../../monitoring/report.js";
import type { CardWords } from "./format.js";
import { Wide } from "./Rich.js";

// The card's Monitoring section (issue 49 item 7): what is watched once the model serves, the thresholds that
// decide, and the results so far from the monitoring figures (src/monitoring/report.ts) of the retention period.
// When nothing has been served it says so in one sentence instead of a table of zeros.

/** The results the page shows: the report of the period, or why there is none. */
export type MonitoringResults = { state: "ok"; report: MonitoringReport } | { state: "unavailable" };

/** Drift rows shown at most; the rest are summed up in one line (they are the least drifted: the list is worst first). */
const MAX_DRIFT_ROWS = 12;

function Watched({ card, w, days }: { card: ModelCard; w: CardWords; days: number }) {
  const plan = card.monitoring;
  const positive = card.performance.positive_class?.name;
  const b = plan.baseline;
  const source = b ? w.t("monitoring.baselineSource") : "";
  const check = plan.input_check;
  return (
    <>
      <p>{w.t("monitoring.intro", { days })}</p>
      <h3>{w.t("monitoring.watched")}</h3>
      <ul>
        <li>{positive ? w.t("monitoring.watchVolume", { class: positive }) : w.t("monitoring.watchVolumeNoClass")}</li>
        <li>
          {!b
            ? w.t("monitoring.noBaseline")
            : b.columns.length
              ? w.t("monitoring.watchDrift", { count: b.columns.length, n: w.count(b.patients_or_rows), source })
              : w.t("monitoring.watchDriftScore", { n: w.count(b.patients_or_rows), source })}
        </li>
        <li>
          {check
            ? w.t("monitoring.watchInputs", {
                what: w.t(check.kind === "table" ? "monitoring.inputsRow" : "monitoring.inputsImage"),
                mode: w.t(check.mode === "refuse" ? "monitoring.modeRefuse" : "monitoring.modeFlag"),
              })
            : w.t("monitoring.noInputCheck")}
        </li>
        {positive ? <li>{w.t("monitoring.watchOutcomes", { id: card.experiment_id })}</li> : null}
      </ul>
    </>
  );
}

function Thresholds({ card, w }: { card: ModelCard; w: CardWords }) {
  const r = card.monitoring.drift_rules;
  const check = card.monitoring.input_check;
  return (
    <>
      <h3>{w.t("monitoring.thresholds")}</h3>
      <ul>
        <li>{w.t("monitoring.ruleSmall", { min: w.count(r.min_window) })}</li>
        <li>{w.t("monitoring.ruleTest", { min: w.count(r.min_window), small: w.count(r.small_window), p: w.num(r.p_value_below, 2) })}</li>
        <li>{w.t("monitoring.ruleDistance", { small: w.count(r.small_window), d: w.num(r.distance_at_least, 2) })}</li>
        <li>{w.t("monitoring.ruleSeverity", { high: w.num(r.psi_high, 2), medium: w.num(r.psi_medium, 2) })}</li>
        {check?.quantile !== null && check?.quantile !== undefined ? (
          <li>
            {w.t("monitoring.ruleInputs", { quantile: w.plain(check.quantile) })}
            {check.test_flagged_rate !== null ? ` ${w.t("monitoring.ruleInputsTest", { rate: w.pct(check.test_flagged_rate) })}` : ""}
          </li>
        ) : null}
        <li>{w.t("monitoring.alerts")}</li>
      </ul>
    </>
  );
}

function DriftTable({ report, w }: { report: MonitoringReport; w: CardWords }) {
  const features = report.drift.features;
  if (!features.length) return null;
  const shown = features.slice(0, MAX_DRIFT_ROWS);
  const rest = features.length - shown.length;
  return (
    <>
      <Wide>
        <table className="sg">
          <caption>{w.t("monitoring.driftTable")}</caption>
          <thead>
            <tr>
              <th scope="col">{w.t("monitoring.feature")}</th>
              <th scope="col" className="n">
                {w.t("monitoring.n")}
              </th>
              <th scope="col">{w.t("monitoring.test")}</th>
              <th scope="col" className="n">
                {w.t("monitoring.statistic")}
              </th>
              <th scope="col">{w.t("monitoring.severity")}</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((f) => (
              <tr key={`${f.kind}:${f.feature}`} className={f.drifted ? "worse" : undefined}>
                <th scope="row">
                  {f.kind === "score"
                    ? w.t("monitoring.scoreFeature")
                    : f.kind === "features"
                      ? w.t("monitoring.featureComponent", { n: featureComponent(f.feature) ?? f.feature })
                      : f.feature}
                </th>
                <td className="n">{w.count(f.n)}</td>
                <td>{f.test ? w.t(`monitoring.testName.${f.test}`) : "–"}</td>
                <td className="n">
                  {w.num(f.statistic)}
                  {f.p_value !== null ? <span className="pct"> ({w.t("monitoring.pValue", { p: w.num(f.p_value) })})</span> : null}
                </td>
                <td>{w.t(`monitoring.severityName.${f.severity}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Wide>
      {rest > 0 ? <p className="muted">{w.t("monitoring.moreFeatures", { count: rest })}</p> : null}
    </>
  );
}

const REALIZED_METRICS = ["sensitivity", "specificity", "ppv", "npv", "auc"] as const;

function Outcomes({ report, w }: { report: MonitoringReport; w: CardWords }) {
  const o = report.outcomes;
  const perf = report.performance;
  if (!o.labelled) return <p>{w.t("monitoring.noOutcomes")}</p>;
  const iv = (m: { value: number | null; ci_low: number | null; ci_high: number | null } | null) =>
    m && m.value !== null ? `${w.num(m.value)} (${w.range(m.ci_low, m.ci_high)})` : "–";
  const e = perf.estimated;
  return (
    <>
      <p>{w.t("monitoring.outcomes", { labelled: w.count(o.labelled), records: w.count(o.records), coverage: w.pct(o.coverage) })}</p>
      <Wide>
        <table>
          <caption>{w.t("monitoring.realizedCaption")}</caption>
          <thead>
            <tr>
              <th scope="col">{w.t("perf.figure")}</th>
              <th scope="col" className="n">
                {w.t("monitoring.realized")}
              </th>
              <th scope="col" className="n">
                {w.t("monitoring.cardFigure")}
              </th>
            </tr>
          </thead>
          <tbody>
            {REALIZED_METRICS.map((k) => (
              <tr key={k}>
                <th scope="row">{w.t(`monitoring.metric.${k}`)}</th>
                <td className="n">{iv(perf.realized[k])}</td>
                <td className="n">{iv(perf.model_card[k])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Wide>
      {e.n ? (
        <p>
          {w.t("monitoring.estimated", {
            count: w.count(e.n),
            sensitivity: w.num(e.sensitivity),
            specificity: w.num(e.specificity),
            ppv: w.num(e.ppv),
            npv: w.num(e.npv),
          })}
        </p>
      ) : null}
    </>
  );
}

function Results({ results, w, days }: { results: MonitoringResults; w: CardWords; days: number }) {
  if (results.state === "unavailable") return <p className="muted">{w.t("monitoring.unavailable")}</p>;
  const r = results.report;
  if (!r.predictions) return <p>{w.t("monitoring.nothingServed", { days })}</p>;
  const d = r.decisions;
  return (
    <>
      <p>{w.t("monitoring.period", { from: w.date(r.from), to: w.date(r.to), days })}</p>
      <p>
        {w.t("monitoring.predictions", {
          count: r.predictions,
          p50: w.count(r.latency_ms.p50_at_most),
          p95: w.count(r.latency_ms.p95_at_most),
        })}
      </p>
      {d.positive_class && d.positive_rate !== null ? (
        <p>
          {d.baseline_positive_rate !== null
            ? w.t("monitoring.positiveRate", {
                class: d.positive_class,
                rate: w.pct(d.positive_rate),
                baseline: w.pct(d.baseline_positive_rate),
              })
            : w.t("monitoring.positiveRateNoBaseline", { class: d.positive_class, rate: w.pct(d.positive_rate) })}
        </p>
      ) : null}
      <p>{w.t("monitoring.driftStatus", { status: w.t(`monitoring.status.${r.drift.status}`) })}</p>
      <DriftTable report={r} w={w} />
      {d.positive_class ? <Outcomes report={r} w={w} /> : null}
    </>
  );
}

export function MonitoringSection(props: { card: ModelCard; w: CardWords; n: number; results: MonitoringResults; retentionDays: number }) {
  const { card, w, n, results, retentionDays: days } = props;
  return (
    <section aria-label={w.t("monitoring.heading", { n })}>
      <h2>{w.t("monitoring.heading", { n })}</h2>
      <Watched card={card} w={w} days={days} />
      <Thresholds card={card} w={w} />
      <h3>{w.t("monitoring.results")}</h3>
      <Results results={results} w={w} days={days} />
    </section>
  );
}
