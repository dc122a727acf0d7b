import { useTranslation } from "react-i18next";
import type { MonitoringReport } from "../../api/types";
import { formatCount, formatDate, formatNumber, formatPercent } from "../../lib/format";

const W = 600;
const H = 160;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * The score's distribution in the period (filled bars) against the baseline's (outlined), each as shares of its own
 * total so that the shapes compare whatever the volumes; the numbers are in the table under it.
 */
export function ScoreChart({ edges, window, baseline }: { edges: number[]; window: number[]; baseline: number[] }) {
  const { t } = useTranslation("monitoring");
  const bins = Math.max(window.length, baseline.length, edges.length + 1);
  const nw = sum(window);
  const nb = sum(baseline);
  if (!nw && !nb) return <p className="muted">{t("score.none")}</p>;
  const share = (xs: number[], n: number) => Array.from({ length: bins }, (_, i) => (n ? (xs[i] ?? 0) / n : 0));
  const sw = share(window, nw);
  const sb = share(baseline, nb);
  const top = Math.max(...sw, ...sb, 1e-9);
  const bw = W / bins;
  // Bin i holds scores from edges[i-1] (included) to edges[i] (excluded), as serving bins them.
  const range = (i: number) =>
    i === 0
      ? `< ${formatNumber(edges[0], 2)}`
      : i >= edges.length
        ? `≥ ${formatNumber(edges[edges.length - 1], 2)}`
        : `${formatNumber(edges[i - 1], 2)} – ${formatNumber(edges[i], 2)}`;
  return (
    <figure className="chart" data-testid="score-chart">
      <svg viewBox={`0 0 ${W} ${H + 18}`} role="img" aria-label={t("score.aria", { n: formatCount(nw), baseline: formatCount(nb) })}>
        {sw.map((s, i) => (
          <rect key={`w${i}`} className="bar-window" x={i * bw + 2} width={bw - 4} y={H - (s / top) * H} height={(s / top) * H} />
        ))}
        {sb.map((s, i) => (
          <rect key={`b${i}`} className="bar-baseline" x={i * bw + 1} width={bw - 2} y={H - (s / top) * H} height={(s / top) * H} />
        ))}
        <line x1={0} x2={W} y1={H} y2={H} className="axis" />
        <text x={0} y={H + 15} className="tick">
          {formatNumber(0, 0)}
        </text>
        <text x={W} y={H + 15} className="tick" textAnchor="end">
          {formatNumber(1, 0)}
        </text>
      </svg>
      <figcaption className="small">
        <span className="key key-window" /> {t("score.window", { n: formatCount(nw) })} <span className="key key-baseline" />{" "}
        {t("score.baseline", { n: formatCount(nb) })}
      </figcaption>
      <details>
        <summary className="small">{t("score.table")}</summary>
        <div className="table-wrap" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">{t("score.bin")}</th>
                <th scope="col">{t("score.windowShare")}</th>
                <th scope="col">{t("score.baselineShare")}</th>
              </tr>
            </thead>
            <tbody>
              {sw.map((s, i) => (
                <tr key={i}>
                  <td>{range(i)}</td>
                  <td>
                    {formatPercent(s)} <span className="muted small">({formatCount(window[i] ?? 0)})</span>
                  </td>
                  <td>
                    {formatPercent(sb[i])} <span className="muted small">({formatCount(baseline[i] ?? 0)})</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** Predictions per hour in the period (the hours without any are left out), with the busiest hour named. */
export function HourlyVolume({ perHour }: { perHour: MonitoringReport["per_hour"] }) {
  const { t } = useTranslation("monitoring");
  if (perHour.length === 0) return <p className="muted">{t("volume.none")}</p>;
  const top = Math.max(...perHour.map((h) => h.predictions), 1);
  const busiest = perHour.reduce((a, b) => (b.predictions > a.predictions ? b : a));
  const bw = W / Math.max(perHour.length, 12);
  return (
    <figure className="chart" data-testid="volume-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={t("volume.aria", { hours: perHour.length })}>
        {perHour.map((h, i) => (
          <rect
            key={h.hour}
            className="bar-window"
            x={i * bw + 1}
            width={Math.max(bw - 2, 1)}
            y={H - (h.predictions / top) * H}
            height={(h.predictions / top) * H}
          >
            <title>{`${formatDate(h.hour)}: ${formatCount(h.predictions)}`}</title>
          </rect>
        ))}
        <line x1={0} x2={W} y1={H} y2={H} className="axis" />
      </svg>
      <figcaption className="small muted">
        {t("volume.caption", {
          count: perHour.length,
          hours: formatCount(perHour.length),
          busiest: formatDate(busiest.hour),
          n: formatCount(busiest.predictions),
          latency: busiest.latency_ms_mean === null ? "–" : formatNumber(busiest.latency_ms_mean, 1),
        })}
      </figcaption>
    </figure>
  );
}
