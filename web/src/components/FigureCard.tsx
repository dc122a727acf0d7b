import { useRef, useState } from "react";
import { useTranslation } from "react-i18next";

/** The numbers behind a figure (report.json figure_tables), for screen readers and for anyone who wants the values. */
export interface FigureTable {
  columns: string[];
  rows: Array<Array<string | number | null>>;
}

export interface FigureRef {
  name: string;
  title: string;
  url: string;
}

/** report.json's figure_tables, read defensively: reports written before it existed have none. */
export function figureTables(report: Record<string, unknown> | null | undefined): Record<string, FigureTable> {
  const raw = report?.figure_tables;
  if (!raw || typeof raw !== "object") return {};
  const out: Record<string, FigureTable> = {};
  for (const [name, t] of Object.entries(raw as Record<string, unknown>)) {
    const table = t as Partial<FigureTable>;
    if (Array.isArray(table?.columns) && Array.isArray(table?.rows)) out[name] = table as FigureTable;
  }
  return out;
}

/**
 * One figure: a button that opens it large in a modal dialog (click, Enter or Space; Escape or the close button
 * shuts it), the caption, and its numbers in a <details> table. The native <dialog> gives focus trapping and
 * Escape for free, and returns focus to the button on close.
 */
export function FigureCard({ figure, table }: { figure: FigureRef; table?: FigureTable }) {
  const { t } = useTranslation("result");
  const dialog = useRef<HTMLDialogElement>(null);
  // The large image is in the page only while the dialog is open: no second download of every figure up front.
  const [open, setOpen] = useState(false);
  const show = () => {
    setOpen(true);
    dialog.current?.showModal();
  };
  return (
    <figure data-testid={`figure-${figure.name}`}>
      <button type="button" className="figure-open" onClick={show} aria-label={t("fig.enlarge", { title: figure.title })}>
        <img src={figure.url} alt={figure.title} loading="lazy" />
      </button>
      <figcaption>{figure.title}</figcaption>
      {table ? (
        <details className="figure-data">
          <summary>{t("fig.numbers")}</summary>
          <div className="table-wrap" tabIndex={0}>
            <table>
              <caption className="visually-hidden">{figure.title}</caption>
              <thead>
                <tr>
                  {table.columns.map((c) => (
                    <th scope="col" key={c}>
                      {c}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {table.rows.map((row, i) => (
                  <tr key={i}>
                    {row.map((v, j) => (
                      <td key={j}>{v === null ? "–" : String(v)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      ) : null}
      <dialog
        ref={dialog}
        className="figure-dialog"
        aria-label={figure.title}
        data-testid="figure-dialog"
        onClose={() => setOpen(false)}
        // A click on the backdrop (the dialog element itself, outside its content) closes it.
        onClick={(e) => e.target === dialog.current && dialog.current?.close()}
      >
        <div className="figure-dialog-body">
          <div className="figure-dialog-head">
            <h3>{figure.title}</h3>
            <button type="button" className="secondary" onClick={() => dialog.current?.close()} autoFocus>
              {t("fig.close")}
            </button>
          </div>
          {open ? <img src={figure.url} alt={figure.title} /> : null}
        </div>
      </dialog>
    </figure>
  );
}
