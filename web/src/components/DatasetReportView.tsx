import type { DatasetReport } from "../api/types";
import { dicomSummaryLine } from "../lib/dicom-summary";
import { problemHeadline, problemRows } from "../lib/problems";

/** The problems of a dataset report as a table: severity, code, row, column, path, message. */
export function ProblemTable({ report }: { report: Pick<DatasetReport, "errors" | "warnings" | "summary"> }) {
  const rows = problemRows(report);
  if (!rows.length) return <p>No problems found.</p>;
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="problems" aria-label="Dataset problems">
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Row</th>
            <th scope="col">Column</th>
            <th scope="col">Path</th>
            <th scope="col">Message</th>
            <th scope="col">Code</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((p, i) => (
            <tr key={i} className={`sev-${p.severity}`}>
              <td>{p.severity}</td>
              <td>{p.row ?? ""}</td>
              <td>{p.column ?? ""}</td>
              <td className="path">{p.path ?? ""}</td>
              <td>{p.message}</td>
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
  const facts: Array<[string, string | number | undefined]> = [
    ["Format", summary.format],
    ["CSV", summary.csv_path],
    ["Rows", summary.rows],
    ["Patients", summary.patients],
    ["Images", summary.images],
    ["Boxes", summary.boxes],
    [
      "Images per patient",
      summary.images_per_patient
        ? `${summary.images_per_patient.min}–${summary.images_per_patient.max} (mean ${summary.images_per_patient.mean.toFixed(1)})`
        : undefined,
    ],
    ["Image widths", summary.image_sizes ? `${summary.image_sizes.width.min}–${summary.image_sizes.width.max} px` : undefined],
    ["Image heights", summary.image_sizes ? `${summary.image_sizes.height.min}–${summary.image_sizes.height.max} px` : undefined],
    [
      "Channels",
      summary.image_sizes
        ? Object.entries(summary.image_sizes.channels)
            .map(([c, n]) => `${c}: ${n}`)
            .join(", ")
        : undefined,
    ],
    ["Label range", summary.label_range ? `${summary.label_range.min} – ${summary.label_range.max}` : undefined],
    [
      "Split (patients)",
      summary.split
        ? `train ${summary.split.train}, validation ${summary.split.val}, test ${summary.split.test}${summary.split.from_column ? ` (from ${summary.split.from_column})` : ""}`
        : undefined,
    ],
    ["Images no row refers to", summary.unreferenced_images],
    ["DICOM", summary.dicom ? dicomSummaryLine(summary.dicom) : undefined],
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
          <table aria-label={`Class counts of ${col}`}>
            <caption>Class counts: {col}</caption>
            <thead>
              <tr>
                <th scope="col">Class</th>
                <th scope="col">Count</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(counts).map(([k, n]) => (
                <tr key={k}>
                  <td>{k}</td>
                  <td>{n}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      {Object.entries(summary.samples ?? {}).map(([col, classes]) => (
        <div key={`samples-${col}`} data-testid="samples">
          <h4>Sample images per class: {col}</h4>
          {Object.entries(classes).map(([cls, list]) => (
            <figure key={cls} className="samples">
              <figcaption>{cls}</figcaption>
              {list.map((s) => (
                <img key={s.path} src={s.data} alt={`${cls}: ${s.path} (row ${s.row})`} title={`${s.path} (row ${s.row})`} />
              ))}
            </figure>
          ))}
        </div>
      ))}
      {summary.features?.length ? (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Input columns">
            <caption>Input columns</caption>
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">Type</th>
                <th scope="col">Range / categories</th>
                <th scope="col">Missing</th>
              </tr>
            </thead>
            <tbody>
              {summary.features.map((f) => (
                <tr key={f.name}>
                  <td>{f.name}</td>
                  <td>{f.type}</td>
                  <td>{f.type === "numeric" ? `${f.min ?? "?"} – ${f.max ?? "?"}` : `${f.categories ?? "?"} categories`}</td>
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
  return (
    <section aria-label="Dataset report" data-testid="dataset-report">
      <p className={report.valid ? "ok" : "bad"}>
        <strong>{report.valid ? "The dataset passed its checks." : "The dataset has errors to fix before it can train."}</strong>{" "}
        {problemHeadline(report)}
      </p>
      <ProblemTable report={report} />
      <h3>Summary</h3>
      <DatasetSummaryView summary={report.summary} />
    </section>
  );
}
