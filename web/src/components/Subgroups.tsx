import type { Experiment } from "../api/types";

// Test performance per group of each column the request named in subgroup_cols (docs/metrics.md, Subgroups). The
// pipeline computes every figure and flag (pipelines/builder_pipelines/common/subgroups.py); this only shows them.
// On a phone each group becomes a small card (CSS: table.subgroups), so no table scrolls sideways.

type SubgroupColumn = NonNullable<Experiment["subgroups"]>[number];
type Group = SubgroupColumn["groups"][number];
type Figure = Group["auc"];

const KIND_WORDS: Record<SubgroupColumn["kind"], string> = {
  categorical: "one group per value; values held by fewer than 20 test patients pooled as “other”",
  quartiles: "quartiles of the test patients' values",
  bins: "at the cut points given in the request",
};

function Fig({ v }: { v: Figure }) {
  if (!v || v.value === null) return <span className="muted">–</span>;
  return (
    <span>
      <strong>{v.value.toFixed(2)}</strong>
      {v.ci_low !== null && v.ci_high !== null ? (
        <span className="muted">
          {" "}
          ({v.ci_low.toFixed(2)}–{v.ci_high.toFixed(2)})
        </span>
      ) : null}
    </span>
  );
}

function Flag({ g }: { g: Group }) {
  if (g.flag === "worse")
    return (
      <strong className="subgroup-worse">
        Clearly worse than the rest{typeof g.rest_auc === "number" ? ` (others: AUC ${g.rest_auc.toFixed(2)})` : ""}
      </strong>
    );
  if (g.flag === "too_small") return <span className="muted">Too few patients for figures</span>;
  return <span className="muted">–</span>;
}

function ColumnTable({ col, positiveName }: { col: SubgroupColumn; positiveName?: string | null }) {
  if (col.skipped)
    return (
      <p data-testid="subgroup-skipped">
        <strong>{col.column}</strong>: not grouped. {col.skipped}.
      </p>
    );
  return (
    <div className="table-wrap">
      <table className="subgroups" data-testid="subgroup-table" data-column={col.column}>
        <caption>
          {col.column} <span className="muted">({KIND_WORDS[col.kind]})</span>
        </caption>
        <thead>
          <tr>
            <th scope="col">Group</th>
            <th scope="col">Patients</th>
            <th scope="col">{positiveName ? `With ${positiveName}` : "Prevalence"}</th>
            <th scope="col">AUC (95% CI)</th>
            <th scope="col">Sensitivity</th>
            <th scope="col">Specificity</th>
            <th scope="col">Flag</th>
          </tr>
        </thead>
        <tbody>
          {col.groups.map((g) => (
            <tr key={g.label} data-flag={g.flag ?? "none"} className={g.flag === "worse" ? "worse" : undefined}>
              <th scope="row">{g.label}</th>
              <td data-label="Patients">{g.patients}</td>
              <td data-label={positiveName ? `With ${positiveName}` : "Prevalence"}>
                {g.prevalence === null ? <span className="muted">–</span> : `${g.positives ?? "–"} (${Math.round(g.prevalence * 100)}%)`}
              </td>
              <td data-label="AUC">
                <Fig v={g.auc} />
              </td>
              <td data-label="Sensitivity">
                <Fig v={g.sensitivity} />
              </td>
              <td data-label="Specificity">
                <Fig v={g.specificity} />
              </td>
              <td data-label="Flag">
                <Flag g={g} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The Subgroups section: one table per column, or nothing when the request named no subgroup columns. */
export function SubgroupsSection({ exp }: { exp: Pick<Experiment, "subgroups" | "positive_class"> }) {
  const cols = exp.subgroups;
  if (!cols?.length) return null;
  const positive = exp.positive_class?.name;
  return (
    <section data-testid="subgroups" aria-labelledby="subgroups-title">
      <h2 id="subgroups-title">Subgroups</h2>
      <p className="muted">
        The test patients of each group, at the model's operating point{positive ? `; sensitivity and specificity are for ${positive}` : ""}
        . In brackets: 95% intervals from a bootstrap over the group's patients. A group is flagged clearly worse when its whole AUC
        interval lies below the AUC of the other test patients; a group with fewer than 20 patients, or fewer than 5 of a class, gets no
        figures.
      </p>
      {cols.map((c) => (
        <ColumnTable key={c.column} col={c} positiveName={positive} />
      ))}
    </section>
  );
}
