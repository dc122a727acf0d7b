import { useTranslation } from "react-i18next";
import type { DatasetReport } from "../api/types";
import { dicomSummaryLine } from "../lib/dicom-summary";
import { formatCount, formatNumber } from "../lib/format";
import { problemHeadline, problemRows } from "../lib/problems";

/** The problems of a dataset report as a table: severity, code, row, column, path, message. */
export function ProblemTable({ report }: { report: Pick<DatasetReport, "errors" | "warnings" | "summary"> }) {
  const { t, i18n } = useTranslation("dataset");
  const rows = problemRows(report);
  if (!rows.length) return <p>{t("report.noProblems")}</p>;
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="problems" aria-label={t("report.problems")}>
        <thead>
          <tr>
            <th scope="col">{t("report.severity")}</th>
            <th scope="col">{t("report.row")}</th>
            <th scope="col">{t("report.column")}</th>
            <th scope="col">{t("report.path")}</th>
            <th scope="col">{t("report.message")}</th>
            <th scope="col">{t("report.code")}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((p, i) => (
            <tr key={i} className={`sev-${p.severity}`}>
              <td>{t(`report.sev.${p.severity}`, { defaultValue: p.severity })}</td>
              <td>{p.row ?? ""}</td>
              <td>{p.column ?? ""}</td>
              <td className="path">{p.path ?? ""}</td>
              {/* A problem with a catalog key is said in the page's language; one stored before keys is the English it
                  was, marked so on a page in another language. */}
              {p.key ? (
                <td>{t(p.key, { ...p.params, defaultValue: p.message })}</td>
              ) : (
                <td lang={i18n.resolvedLanguage === "en" ? undefined : "en"}>{p.message}</td>
              )}
              <td>
                <code>{p.code}</code>
                {p.total > 1 ? <span className="muted"> ×{p.total}</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function DatasetSummaryView({ summary }: { summary: DatasetReport["summary"] }) {
  const { t } = useTranslation("dataset");
  const count = (v: number | undefined | null) => (v === undefined || v === null ? undefined : formatCount(v));
  const facts: Array<[string, string | number | undefined]> = [
    [t("summary.format"), summary.format],
    ["CSV", summary.csv_path],
    [t("summary.rows"), count(summary.rows)],
    [t("summary.patients"), count(summary.patients)],
    [t("summary.images"), count(summary.images)],
    [t("summary.boxes"), count(summary.boxes)],
    [
      t("summary.imagesPerPatient"),
      summary.images_per_patient
        ? t("summary.imagesPerPatientValue", {
            min: summary.images_per_patient.min,
            max: summary.images_per_patient.max,
            mean: formatNumber(summary.images_per_patient.mean, 1),
          })
        : undefined,
    ],
    [t("summary.imageWidths"), summary.image_sizes ? `${summary.image_sizes.width.min}–${summary.image_sizes.width.max} px` : undefined],
    [t("summary.imageHeights"), summary.image_sizes ? `${summary.image_sizes.height.min}–${summary.image_sizes.height.max} px` : undefined],
    [
      t("summary.channels"),
      summary.image_sizes
        ? Object.entries(summary.image_sizes.channels)
            .map(([c, n]) => `${c}: ${n}`)
            .join(", ")
        : undefined,
    ],
    [t("summary.labelRange"), summary.label_range ? `${summary.label_range.min} – ${summary.label_range.max}` : undefined],
    [
      t("summary.split"),
      summary.split
        ? t(summary.split.from_column ? "summary.splitValueFrom" : "summary.splitValue", {
            train: formatCount(summary.split.train),
            val: formatCount(summary.split.val),
            test: formatCount(summary.split.test),
            column: summary.split.from_column,
          })
        : undefined,
    ],
    [t("summary.unreferenced"), count(summary.unreferenced_images)],
    [t("summary.dicom"), summary.dicom ? dicomSummaryLine(summary.dicom, t) : undefined],
  ];
  return (
    <div className="summary">
      <dl className="facts">
        {facts
          .filter(([, v]) => v !== undefined && v !== null)
          .map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
      </dl>
      {Object.entries(summary.class_counts ?? {}).map(([col, counts]) => (
        <div key={col} className="table-wrap" tabIndex={0}>
          <table aria-label={t("summary.classCountsOf", { col })}>
            <caption>{t("summary.classCounts", { col })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("summary.class")}</th>
                <th scope="col">{t("summary.count")}</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(counts).map(([k, n]) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td>{formatCount(n)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      {Object.entries(summary.samples ?? {}).map(([col, classes]) => (
        <div key={`samples-${col}`} data-testid="samples">
          <h4>{t("summary.samples", { col })}</h4>
          {Object.entries(classes).map(([cls, list]) => (
            <figure key={cls} className="samples">
              <figcaption>{cls}</figcaption>
              {list.map((s) => (
                <img
                  key={s.path}
                  src={s.data}
                  alt={`${cls}: ${t("summary.sampleTitle", { path: s.path, row: s.row })}`}
                  title={t("summary.sampleTitle", { path: s.path, row: s.row })}
                />
              ))}
            </figure>
          ))}
        </div>
      ))}
      {summary.features?.length ? (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label={t("summary.inputColumns")}>
            <caption>{t("summary.inputColumns")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("report.column")}</th>
                <th scope="col">{t("summary.type")}</th>
                <th scope="col">{t("summary.range")}</th>
                <th scope="col">{t("summary.missing")}</th>
              </tr>
            </thead>
            <tbody>
              {summary.features.map((f) => (
                <tr key={f.name}>
                  <td>{f.name}</td>
                  <td>{t(`columns.type.${f.type}`, { defaultValue: f.type })}</td>
                  <td>
                    {f.type === "numeric" ? `${f.min ?? "?"} – ${f.max ?? "?"}` : t("summary.categories", { n: f.categories ?? "?" })}
                  </td>
                  <td>{f.missing}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

export function DatasetReportView({ report }: { report: DatasetReport }) {
  const { t } = useTranslation("dataset");
  return (
    <section aria-label={t("report.label")} data-testid="dataset-report">
      <p className={report.valid ? "ok" : "bad"}>
        <strong>{report.valid ? t("report.passed") : t("report.hasErrors")}</strong> {problemHeadline(report, t)}
      </p>
      <ProblemTable report={report} />
      <h3>{t("summary.title")}</h3>
      <DatasetSummaryView summary={report.summary} />
    </section>
  );
}
