import { useTranslation } from "react-i18next";
import type { Experiment } from "../api/types";
import { formatCount, formatDate, formatNumber } from "../lib/format";
import { usePermission } from "../workspace";
import { Link } from "./ui";

// A Builder study's internal test figure beside the Retrospective studies run on its model (issue 43 item 4): the
// internal split comes from the same source as the training data and overstates performance on new patients, so the
// figures on other data must be read next to it, not on another page. The server lists the studies
// (GET /v1/experiments/{id} retrospective_studies); this only shows them.

type Study = NonNullable<Experiment["retrospective_studies"]>[number];
type Figure = NonNullable<Study["figure"]>;

const FIGURE_WORDS: Record<string, string> = { auc: "AUC", map50: "mAP@0.5", rmse: "RMSE", f_macro: "F1 (macro)" };
const HEADLINE = ["auc", "map50", "rmse", "f_macro"];

function internalFigure(metrics: Experiment["metrics"]): Figure | null {
  const m = (metrics ?? {}) as Record<string, { value: number | null; ci_low?: number | null; ci_high?: number | null } | undefined>;
  const name = HEADLINE.find((n) => typeof m[n]?.value === "number");
  if (!name) return null;
  return { name, value: m[name]!.value, ci_low: m[name]!.ci_low ?? null, ci_high: m[name]!.ci_high ?? null };
}

function FigureCell({ f }: { f: Figure | null }) {
  const { t } = useTranslation("retro");
  if (!f || f.value === null) return <td className="muted">–</td>;
  return (
    <td>
      {FIGURE_WORDS[f.name] ?? f.name} <strong>{formatNumber(f.value)}</strong>
      {f.ci_low !== null && f.ci_high !== null ? (
        <span className="muted"> {t("interval", { low: formatNumber(f.ci_low), high: formatNumber(f.ci_high) })}</span>
      ) : null}
    </td>
  );
}

export function RetrospectiveStudies({ exp }: { exp: Experiment }) {
  const { t } = useTranslation("retro");
  // A study is a new build: the invitation to run one is for those whose role may build.
  const canBuild = usePermission("experiment.build");
  const studies = exp.retrospective_studies;
  if (!studies) return null; // a Retrospective study itself: its page compares with the source's internal test
  const testPatients = exp.dataset_report?.summary.split?.test;
  return (
    <section className="retrospective-studies" aria-labelledby="retro-title" data-testid="retrospective-studies">
      <h3 id="retro-title">{t("title")}</h3>
      <p className="muted small">{t("lead")}</p>
      <div className="table-wrap" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">{t("testedOn")}</th>
              <th scope="col">{t("figure")}</th>
              <th scope="col">{t("patients")}</th>
              <th scope="col">{t("date")}</th>
            </tr>
          </thead>
          <tbody>
            <tr data-testid="retro-internal">
              <th scope="row">{t("internal")}</th>
              <FigureCell f={internalFigure(exp.metrics)} />
              <td>{typeof testPatients === "number" ? formatCount(testPatients) : "–"}</td>
              <td>{formatDate(exp.finished_at as string | null)}</td>
            </tr>
            {studies.map((s) => (
              <tr key={s.experiment_id} data-testid="retro-study" data-experiment={s.experiment_id}>
                <th scope="row">
                  <Link to={`/experiments/${s.experiment_id}`}>
                    {t("study", { id: s.experiment_id })}
                    {s.name ? `: ${s.name}` : ""}
                  </Link>
                </th>
                <FigureCell f={s.figure} />
                <td>{typeof s.patients === "number" ? formatCount(s.patients) : "–"}</td>
                <td>{formatDate(s.finished_at as string | null)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {studies.length === 0 ? (
        <p data-testid="retro-none">
          {t("none")}
          {canBuild.allowed ? (
            <>
              {" "}
              <Link to={`/experiments/new?source=${exp.experiment_id}`}>{t("noneLink")}</Link> {t("noneAfter")}
            </>
          ) : null}
        </p>
      ) : null}
    </section>
  );
}
