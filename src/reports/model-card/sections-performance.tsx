import type { CardFigure, ModelCard } from "../../experiments/model-card.js";
import type { CardWords } from "./format.js";
import { Rich, Wide } from "./Rich.js";
import { PipelineText, type SectionProps } from "./sections-data.js";

// Sections 6, 6b and 7: performance at the operating point with intervals, by subgroup, and calibration.

/** A figure's plain name in the reader's language; a metric the catalog does not know keeps the pipeline's label. */
export const figureLabel = (f: { name: string; label: string }, w: CardWords) =>
  w.has(`figure.${f.name}`) ? w.t(`figure.${f.name}`) : f.label;

export function FigureTable({ rows, w }: { rows: CardFigure[]; w: CardWords }) {
  if (!rows.length) return <p className="muted">{w.t("perf.noFigures")}</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">{w.t("perf.figure")}</th>
          <th scope="col" className="n">
            {w.t("perf.value")}
          </th>
          <th scope="col" className="n">
            {w.t("perf.interval")}
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((f) => (
          <tr key={f.name}>
            <th scope="row">{figureLabel(f, w)}</th>
            <td className="n">{w.num(f.value)}</td>
            <td className="n">{w.range(f.ci_low, f.ci_high)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ConfusionMatrix({ cm, w }: { cm: ModelCard["performance"]["confusion_matrix"]; w: CardWords }) {
  if (!cm?.counts) return null;
  return (
    <Wide>
      <table className="cm">
        <caption>{w.t("perf.cmCaption")}</caption>
        <thead>
          <tr>
            <th scope="col">{w.t("perf.cmCorner")}</th>
            {cm.labels.map((l, i) => (
              <th scope="col" className="n" key={i}>
                {l}
              </th>
            ))}
            <th scope="col" className="n">
              {w.t("perf.total")}
            </th>
          </tr>
        </thead>
        <tbody>
          {cm.counts.map((row, i) => {
            const total = row.reduce((a, b) => a + b, 0);
            return (
              <tr key={i}>
                <th scope="row">{cm.labels[i]}</th>
                {row.map((c, j) => (
                  <td className={i === j ? "n diag" : "n"} key={j}>
                    {w.count(c)} <span className="pct">({w.pct(total ? c / total : 0, 0)})</span>
                  </td>
                ))}
                <td className="n">{w.count(total)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Wide>
  );
}

function OperatingPoint({ card, w }: SectionProps) {
  const op = card.performance.operating_point;
  if (!op) return null;
  const rule = op.rule ? (
    <>
      {" "}
      {w.t("perf.ruleLabel")} <PipelineText w={w} text={op.rule} />.
    </>
  ) : null;
  if (!op.decision)
    return (
      <>
        {w.t("perf.thresholds", { thresholds: op.thresholds.map((t) => w.num(t)).join(w.lang === "es" ? "; " : ", ") })}
        {rule}
      </>
    );
  return (
    <>
      <Rich w={w} k="perf.decision" params={{ class: op.decision.class, threshold: w.num(op.decision.score_at_least) }} />
      {rule}
      {op.saved ? w.t("perf.saved", { version: op.saved.version, date: w.date(op.saved.saved_at), from: op.saved.from_version }) : null}
    </>
  );
}

export function Performance({ card, w, n }: SectionProps & { n: number }) {
  const p = card.performance;
  return (
    <>
      <h2>{w.t("perf.heading", { n })}</h2>
      <p>
        {p.positive_class ? <Rich w={w} k="perf.positiveClass" params={{ class: p.positive_class.name }} /> : null}
        <OperatingPoint card={card} w={w} />
      </p>
      <p>{w.t("perf.intervals")}</p>
      <FigureTable rows={p.test} w={w} />
      <ConfusionMatrix cm={p.confusion_matrix} w={w} />
      {p.validation.length ? (
        <details open>
          <summary>{w.t("perf.validation")}</summary>
          <FigureTable rows={p.validation} w={w} />
        </details>
      ) : null}
    </>
  );
}

type Interval = { value: number | null; ci_low: number | null; ci_high: number | null } | null;

export function Subgroups({ columns, w }: { columns: NonNullable<ModelCard["subgroups"]>; w: CardWords }) {
  const cell = (m: Interval) =>
    m ? (
      <>
        {w.num(m.value, 2)} <span className="pct">({w.range(m.ci_low, m.ci_high, 2)})</span>
      </>
    ) : (
      "–"
    );
  return (
    <>
      <h2>{w.t("subgroups.heading")}</h2>
      <p>{w.t("subgroups.intro")}</p>
      {columns.map((c) => {
        if (c.skipped)
          return (
            <p key={c.column}>
              <b>{c.column}</b>: {w.t("subgroups.skippedLabel")} <PipelineText w={w} text={c.skipped} />
            </p>
          );
        const how = w.t(c.kind === "quartiles" ? "subgroups.quartiles" : c.kind === "bins" ? "subgroups.bins" : "subgroups.categories");
        return (
          <Wide key={c.column}>
            <table className="sg">
              <caption>{w.t("subgroups.caption", { column: c.column, how })}</caption>
              <thead>
                <tr>
                  <th scope="col">{w.t("subgroups.group")}</th>
                  <th scope="col" className="n">
                    {w.t("subgroups.patients")}
                  </th>
                  <th scope="col" className="n">
                    {w.t("subgroups.prevalence")}
                  </th>
                  <th scope="col" className="n">
                    AUC
                  </th>
                  <th scope="col" className="n">
                    {w.t("subgroups.sensitivity")}
                  </th>
                  <th scope="col" className="n">
                    {w.t("subgroups.specificity")}
                  </th>
                  <th scope="col">{w.t("subgroups.flag")}</th>
                </tr>
              </thead>
              <tbody>
                {c.groups.map((g, i) => (
                  <tr key={i} className={g.flag === "worse" ? "worse" : undefined}>
                    <th scope="row">{g.label}</th>
                    <td className="n">{w.count(g.patients)}</td>
                    <td className="n">{g.prevalence === null ? "–" : w.pct(g.prevalence, 0)}</td>
                    <td className="n">{cell(g.auc)}</td>
                    <td className="n">{cell(g.sensitivity)}</td>
                    <td className="n">{cell(g.specificity)}</td>
                    <td>{g.flag ? w.t(`subgroups.${g.flag}`) : ""}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Wide>
        );
      })}
    </>
  );
}

export function Calibration({ card, w, n }: SectionProps & { n: number }) {
  const c = card.calibration;
  const method = c.method ? (w.has(`calibration.${c.method}`) ? w.t(`calibration.${c.method}`) : c.method) : null;
  const text = [
    c.ece
      ? w.t("calibration.ece", { value: w.num(c.ece.value), low: w.num(c.ece.ci_low), high: w.num(c.ece.ci_high) })
      : w.t("calibration.noEce"),
    method ? w.t("calibration.method", { method }) : "",
    c.slope && c.intercept
      ? w.t("calibration.slope", {
          slope: w.num(c.slope.value),
          slopeLow: w.num(c.slope.ci_low),
          slopeHigh: w.num(c.slope.ci_high),
          intercept: w.num(c.intercept.value),
          interceptLow: w.num(c.intercept.ci_low),
          interceptHigh: w.num(c.intercept.ci_high),
        })
      : "",
    c.figure ? w.t("calibration.plot") : "",
    c.decision_curve ? w.t("calibration.decisionCurve") : "",
  ].join("");
  return (
    <>
      <h2>{w.t("calibration.heading", { n })}</h2>
      <p>{text}</p>
      <p className="muted">
        {c.not_computed.length
          ? w.t("calibration.notComputed", { list: c.not_computed.map((k) => w.t(`calibration.not.${k}`)).join("; ") })
          : w.t("calibration.allComputed")}
      </p>
    </>
  );
}
