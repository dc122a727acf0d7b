import type { Experiment } from "../api/types";
import { StatusBadge } from "./ui";

// What a clinician needs to read a result without over-trusting it: the badge (amber when a severe warning stands),
// the verdict box with every warning in plain words, and the test confusion matrix as a table (counts and row
// percentages). The warnings themselves are computed by the server (src/experiments/warnings.ts), never here.

type Warning = NonNullable<Experiment["warnings"]>[number];
type Confusion = NonNullable<Experiment["confusion_matrix"]>;

/** The status badge; a ready model with a severe warning says so ("ready — not better than chance") in amber. */
export function ResultBadge({ exp }: { exp: Pick<Experiment, "status" | "warnings"> }) {
  const severe = exp.status === "ready" ? (exp.warnings ?? []).find((w) => w.severity === "severe") : undefined;
  if (!severe) return <StatusBadge status={exp.status} />;
  return (
    <span className="badge status-ready-warned" data-testid="result-badge" data-warning={severe.code}>
      ready — {severe.title}
    </span>
  );
}

const SEVERITY_WORDS: Record<Warning["severity"], string> = { severe: "Serious", caution: "Caution", info: "Note" };

/** Every warning, most severe first; when there is none, a sentence saying what was checked. */
export function VerdictBox({ warnings }: { warnings: Warning[] }) {
  const rank = { severe: 0, caution: 1, info: 2 } as const;
  const sorted = [...warnings].sort((a, b) => rank[a.severity] - rank[b.severity]);
  const worst = sorted[0]?.severity;
  return (
    <section className={`verdict verdict-${worst ?? "none"}`} aria-labelledby="verdict-title" data-testid="verdict">
      <h2 id="verdict-title">
        {worst === "severe"
          ? sorted[0].code === "no_better_than_chance"
            ? "Verdict: not ready for decisions"
            : "Verdict: check before relying on it"
          : worst
            ? "Verdict: usable with care"
            : "Verdict: no warning raised"}
      </h2>
      {sorted.length ? (
        <ul>
          {sorted.map((w) => (
            <li key={w.code} data-code={w.code} data-severity={w.severity}>
              <strong>
                {SEVERITY_WORDS[w.severity]}: {w.title}.
              </strong>{" "}
              {w.message}
            </li>
          ))}
        </ul>
      ) : (
        <p>
          Builder checked the test figures for chance-level results, too few test patients, overfitting, poor calibration, rare classes and
          suspiciously perfect scores, and found none. These are still figures from your own data (internal validation), not a clinical
          validation.
        </p>
      )}
    </section>
  );
}

const pct = (n: number, total: number) => (total ? `${Math.round((n / total) * 1000) / 10}%` : "–");

function Matrix({ labels, counts, caption, testid }: { labels: string[]; counts: number[][]; caption: string; testid?: string }) {
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="confusion" data-testid={testid}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">True class ↓ · predicted →</th>
            {labels.map((l) => (
              <th scope="col" key={l}>
                {l}
              </th>
            ))}
            <th scope="col">Total</th>
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
                    <strong>{n}</strong> <span className="muted">({pct(n, total)})</span>
                  </td>
                ))}
                <td>{total}</td>
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
  const intro = (
    <p className="muted small">
      Test patients by their true class (rows) and the model's prediction at its decision threshold (columns). The percentage is the share
      of that row: the highlighted diagonal is each class's sensitivity.
    </p>
  );
  if (cm.counts) {
    return (
      <>
        <h2>Confusion matrix</h2>
        {intro}
        <Matrix labels={cm.labels} counts={cm.counts} caption="Test set: counts and row %" testid="confusion-matrix" />
      </>
    );
  }
  return (
    <>
      <h2>Confusion matrices</h2>
      {intro}
      {Object.entries(cm.per_label ?? {}).map(([label, counts]) => (
        <Matrix
          key={label}
          labels={["absent", "present"]}
          counts={counts}
          caption={`${label}: test set (counts and row %)`}
          testid="confusion-matrix"
        />
      ))}
    </>
  );
}
