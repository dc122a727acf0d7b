import { useTranslation } from "react-i18next";
import type { Experiment } from "../api/types";
import { formatCount, formatNumber, formatPercent } from "../lib/format";

// Test performance per group of each column the request named in subgroup_cols (docs/metrics.md, Subgroups). The
// pipeline computes every figure and flag (pipelines/builder_pipelines/common/subgroups.py); this only shows them.
// On a phone each group becomes a small card (CSS: table.subgroups), so no table scrolls sideways.

type SubgroupColumn = NonNullable<Experiment["subgroups"]>[number];
type Group = SubgroupColumn["groups"][number];
type Figure = Group["auc"];

function Fig({ v }: { v: Figure }) {
  if (!v || v.value === null) return <span className="muted">–</span>;
  return (
    <span>
      <strong>{formatNumber(v.value, 2)}</strong>
      {v.ci_low !== null && v.ci_high !== null ? (
        <span className="muted">
          {" "}
          ({formatNumber(v.ci_low, 2)}–{formatNumber(v.ci_high, 2)})
        </span>
      ) : null}
    </span>
  );
}

function Flag({ g }: { g: Group }) {
  const { t } = useTranslation("result");
  if (g.flag === "worse")
    return (
      <strong className="subgroup-worse">
        {t("sub.worse")}
        {typeof g.rest_auc === "number" ? ` ${t("sub.others", { auc: formatNumber(g.rest_auc, 2) })}` : ""}
      </strong>
    );
  if (g.flag === "too_small") return <span className="muted">{t("sub.tooSmall")}</span>;
  return <span className="muted">–</span>;
}

function ColumnTable({ col, positiveName }: { col: SubgroupColumn; positiveName?: string | null }) {
  const { t } = useTranslation("result");
  if (col.skipped)
    return (
      <p data-testid="subgroup-skipped">
        <strong>{col.column}</strong>: {t("sub.notGrouped")} {col.skipped}.
      </p>
    );
  const withLabel = positiveName ? t("sub.with", { name: positiveName }) : t("metric.short.prevalence");
  return (
    <div className="table-wrap">
      <table className="subgroups" data-testid="subgroup-table" data-column={col.column}>
        <caption>
          {col.column} <span className="muted">({t(`sub.kind.${col.kind}`)})</span>
        </caption>
        <thead>
          <tr>
            <th scope="col">{t("sub.group")}</th>
            <th scope="col">{t("summary.patients", { ns: "dataset" })}</th>
            <th scope="col">{withLabel}</th>
            <th scope="col">{t("sub.auc")}</th>
            <th scope="col">{t("metric.short.sensitivity")}</th>
            <th scope="col">{t("metric.short.specificity")}</th>
            <th scope="col">{t("sub.flag")}</th>
          </tr>
        </thead>
        <tbody>
          {col.groups.map((g) => (
            <tr key={g.label} data-flag={g.flag ?? "none"} className={g.flag === "worse" ? "worse" : undefined}>
              <th scope="row">{g.label}</th>
              <td data-label={t("summary.patients", { ns: "dataset" })}>{formatCount(g.patients)}</td>
              <td data-label={withLabel}>
                {g.prevalence === null ? <span className="muted">–</span> : `${g.positives ?? "–"} (${formatPercent(g.prevalence, 0)})`}
              </td>
              <td data-label="AUC">
                <Fig v={g.auc} />
              </td>
              <td data-label={t("metric.short.sensitivity")}>
                <Fig v={g.sensitivity} />
              </td>
              <td data-label={t("metric.short.specificity")}>
                <Fig v={g.specificity} />
              </td>
              <td data-label={t("sub.flag")}>
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
  const { t } = useTranslation("result");
  const cols = exp.subgroups;
  if (!cols?.length) return null;
  const positive = exp.positive_class?.name;
  return (
    <section data-testid="subgroups" aria-labelledby="subgroups-title">
      <h2 id="subgroups-title">{t("sub.title")}</h2>
      <p className="muted">{positive ? t("sub.introFor", { positive }) : t("sub.intro")}</p>
      {cols.map((c) => (
        <ColumnTable key={c.column} col={c} positiveName={positive} />
      ))}
    </section>
  );
}
