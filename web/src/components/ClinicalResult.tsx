import { useTranslation } from "react-i18next";
import type { Experiment } from "../api/types";
import { formatCount, formatPercent } from "../lib/format";
import { StatusBadge } from "./ui";

// What a clinician needs to read a result without over-trusting it: the badge (amber when a severe warning stands),
// the verdict box with every warning in plain words, and the test confusion matrix as a table (counts and row
// percentages). The warnings themselves are computed by the server (src/experiments/warnings.ts), never here.

type Warning = NonNullable<Experiment["warnings"]>[number];

/** A warning's title in the page's language, by its code (the server writes it in English). */
function useWarningTitle() {
  const { t } = useTranslation("result");
  return (w: Warning) => t(`warning.${w.code}`, { defaultValue: w.title });
}
type Confusion = NonNullable<Experiment["confusion_matrix"]>;

/** The status badge; a ready model with a severe warning says so ("ready — not better than chance") in amber. */
export function ResultBadge({ exp }: { exp: Pick<Experiment, "status" | "warnings"> }) {
  const { t } = useTranslation("result");
  const title = useWarningTitle();
  const severe = exp.status === "ready" ? (exp.warnings ?? []).find((w) => w.severity === "severe") : undefined;
  if (!severe) return <StatusBadge status={exp.status} />;
  return (
    <span className="badge status-ready-warned" data-testid="result-badge" data-warning={severe.code}>
      {t("common:status.ready")} — {title(severe)}
    </span>
  );
}

/** Every warning, most severe first; when there is none, a sentence saying what was checked. */
export function VerdictBox({ warnings }: { warnings: Warning[] }) {
  const { t } = useTranslation("result");
  const title = useWarningTitle();
  const rank = { severe: 0, caution: 1, info: 2 } as const;
  const sorted = [...warnings].sort((a, b) => rank[a.severity] - rank[b.severity]);
  const worst = sorted[0]?.severity;
  return (
    <section className={`verdict verdict-${worst ?? "none"}`} aria-labelledby="verdict-title" data-testid="verdict">
      <h2 id="verdict-title">
        {worst === "severe"
          ? sorted[0].code === "no_better_than_chance"
            ? t("verdict.notReady")
            : t("verdict.check")
          : worst
            ? t("verdict.withCare")
            : t("verdict.none")}
      </h2>
      {sorted.length ? (
        <ul>
          {sorted.map((w) => (
            <li key={w.code} data-code={w.code} data-severity={w.severity}>
              <strong>
                {t(`verdict.severity.${w.severity}`)}: {title(w)}.
              </strong>{" "}
              {/* The server words the explanation in the dashboard's language (Accept-Language) from the catalog. */}
              {w.message}
            </li>
          ))}
        </ul>
      ) : (
        <p>{t("verdict.noneExplain")}</p>
      )}
    </section>
  );
}

const pct = (n: number, total: number) => (total ? formatPercent(n / total, 1, 0) : "–");

function Matrix({ labels, counts, caption, testid }: { labels: string[]; counts: number[][]; caption: string; testid?: string }) {
  const { t } = useTranslation("result");
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="confusion" data-testid={testid}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t("confusion.corner")}</th>
            {labels.map((l) => (
              <th scope="col" key={l}>
                {l}
              </th>
            ))}
            <th scope="col">{t("confusion.total")}</th>
          </tr>
        </thead>
        <tbody>
          {counts.map((row, i) => {
            const total = row.reduce((s, n) => s + n, 0);
            return (
              <tr key={labels[i]}>
                <th scope="row">{labels[i]}</th>
                {row.map((n, j) => (
                  <td key={j} className={i === j ? "hit-cell" : n ? "miss-cell" : undefined}>
                    <strong>{formatCount(n)}</strong> <span className="muted">({pct(n, total)})</span>
                  </td>
                ))}
                <td>{formatCount(total)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The test confusion matrix: rows the true class, columns the prediction, each cell's share of its row. */
export function ConfusionTable({ cm }: { cm: Confusion }) {
  const { t } = useTranslation("result");
  const intro = <p className="muted small">{t("confusion.intro")}</p>;
  if (cm.counts) {
    return (
      <>
        <h2>{t("confusion.title")}</h2>
        {intro}
        <Matrix labels={cm.labels} counts={cm.counts} caption={t("confusion.caption")} testid="confusion-matrix" />
      </>
    );
  }
  return (
    <>
      <h2>{t("confusion.titlePlural")}</h2>
      {intro}
      {Object.entries(cm.per_label ?? {}).map(([label, counts]) => (
        <Matrix
          key={label}
          labels={[t("confusion.absent"), t("confusion.present")]}
          counts={counts}
          caption={t("confusion.captionLabel", { label })}
          testid="confusion-matrix"
        />
      ))}
    </>
  );
}
