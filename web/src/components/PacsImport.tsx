import { useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { ApiFailure, postEventStream } from "../api/client";
import type { PacsImportResult } from "../api/types";
import { formatCount, locale } from "../lib/format";
import { navigate } from "../lib/router";
import { usePacs } from "../pages/SettingsPacs";
import { ErrorBox } from "./ui";

// Import from PACS (docs/pacs.md#building-a-dataset-from-the-pacs): a CSV of study, series or instance UIDs with the
// labels; the server retrieves and de-identifies the images and stores a dataset zip, which the form then takes as
// an upload. Progress and each row that could not be used come as they happen (POST with Accept: text/event-stream).

interface Progress {
  phase: "locating" | "retrieving" | "storing" | "checking";
  done: number;
  total: number;
  failed: number;
}

interface RowFailure {
  row: number;
  uid: string;
  reason: string;
  reason_es: string;
}

/** The header row of a CSV (quoted names allowed), enough to offer its columns. */
export function csvHeader(text: string): string[] {
  const line = text.replace(/^\uFEFF/, "").split(/\r?\n/, 1)[0] ?? "";
  const out: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted && ch === '"' && line[i + 1] === '"') {
      cell += '"';
      i++;
    } else if (ch === '"') quoted = !quoted;
    else if (ch === "," && !quoted) {
      out.push(cell.trim());
      cell = "";
    } else cell += ch;
  }
  out.push(cell.trim());
  return out.filter(Boolean);
}

/** Where the dataset goes in the user's folder: pacs-<time>/<the CSV's name>.zip. */
export function pacsZipPath(userId: string, fileName: string, now = Date.now()): string {
  const base =
    fileName
      .replace(/\.csv$/i, "")
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[._]+/, "")
      .slice(0, 80) || "pacs";
  return `${userId}/pacs-${now.toString(36)}/${base}.zip`;
}

export function PacsImport({ userId, onImported }: { userId: string; onImported: (r: PacsImportResult) => void }) {
  const { t } = useTranslation("dataset");
  const pacs = usePacs();
  const [csv, setCsv] = useState<{ name: string; text: string; header: string[] } | null>(null);
  const [uidCol, setUidCol] = useState("");
  const [labelCol, setLabelCol] = useState("");
  const [patientCol, setPatientCol] = useState("");
  const [progress, setProgress] = useState<Progress | null>(null);
  const [failed, setFailed] = useState<RowFailure[]>([]);
  const [result, setResult] = useState<PacsImportResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  const pick = async (file: File) => {
    const text = await file.text();
    const header = csvHeader(text);
    setCsv({ name: file.name, text, header });
    setResult(null);
    setFailed([]);
    setProgress(null);
    setError(null);
    const uid = header.find((h) => /uid/i.test(h)) ?? header[0] ?? "";
    setUidCol(uid);
    setLabelCol(header.find((h) => h !== uid && /label|diagn|class/i.test(h)) ?? header.find((h) => h !== uid) ?? "");
    setPatientCol(header.find((h) => h !== uid && /patient|pseudonym/i.test(h)) ?? "");
  };

  const start = async () => {
    if (!csv) return;
    const controller = new AbortController();
    abort.current = controller;
    setBusy(true);
    setError(null);
    setFailed([]);
    setResult(null);
    setProgress({ phase: "locating", done: 0, total: 0, failed: 0 });
    const body = {
      csv: csv.text,
      uid_col: uidCol,
      patient_col: patientCol || null,
      zip_gcloud: pacsZipPath(userId, csv.name),
      label_cols: [labelCol],
    };
    try {
      let done: PacsImportResult | null = null;
      await postEventStream(
        "/v1/datasets/from-pacs",
        body,
        ({ event, data }) => {
          if (event === "progress") setProgress(data as Progress);
          else if (event === "failed") setFailed((f) => [...f, data as RowFailure]);
          else if (event === "done") done = data as PacsImportResult;
          else if (event === "error") {
            const e = (data as { error: { code: string; message: string; details?: Array<{ field?: string; message?: string }> } }).error;
            throw new ApiFailure(0, e.code, e.message, null, e.details ?? []);
          }
        },
        controller.signal,
      );
      if (!done) throw new ApiFailure(0, "stream_ended", t("pacsImport.streamEnded"), null);
      const r: PacsImportResult = done;
      setResult(r);
      setFailed(r.failed);
      onImported(r);
    } catch (err) {
      if (!controller.signal.aborted) setError(err);
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };

  const spanish = locale().startsWith("es");
  const pct = progress && progress.total ? Math.round((progress.done / progress.total) * 100) : 0;
  return (
    <details className="starters" data-testid="pacs-import">
      <summary>{t("pacsImport.summary")}</summary>
      {pacs === null ? (
        <p className="small" data-testid="pacs-import-unconfigured">
          {t("pacsImport.noPacs")}{" "}
          <button type="button" className="link" onClick={() => navigate("/settings/pacs")}>
            {t("pacsImport.toSettings")}
          </button>
        </p>
      ) : (
        <>
          <p className="small muted">{t("pacsImport.intro", { url: pacs?.dicomweb_url ?? "…" })}</p>
          <label>
            {t("pacsImport.csv")}
            <input
              type="file"
              accept=".csv,text/csv"
              disabled={busy}
              data-testid="pacs-csv"
              onChange={(e) => e.target.files?.[0] && void pick(e.target.files[0])}
            />
          </label>
          {csv ? (
            <div className="grid2">
              <label>
                {t("pacsImport.uidCol")}
                <select value={uidCol} onChange={(e) => setUidCol(e.target.value)} disabled={busy} data-testid="pacs-uid-col">
                  {csv.header.map((h) => (
                    <option key={h}>{h}</option>
                  ))}
                </select>
              </label>
              <label>
                {t("pacsImport.labelCol")}
                <select value={labelCol} onChange={(e) => setLabelCol(e.target.value)} disabled={busy} data-testid="pacs-label-col">
                  {csv.header
                    .filter((h) => h !== uidCol)
                    .map((h) => (
                      <option key={h}>{h}</option>
                    ))}
                </select>
              </label>
              <label>
                {t("pacsImport.patientCol")}
                <select value={patientCol} onChange={(e) => setPatientCol(e.target.value)} disabled={busy} data-testid="pacs-patient-col">
                  <option value="">{t("pacsImport.patientNone")}</option>
                  {csv.header
                    .filter((h) => h !== uidCol && h !== labelCol)
                    .map((h) => (
                      <option key={h}>{h}</option>
                    ))}
                </select>
              </label>
            </div>
          ) : null}
          <div className="actions">
            <button
              type="button"
              disabled={!csv || !uidCol || !labelCol || busy}
              onClick={() => void start()}
              data-testid="pacs-import-start"
            >
              {busy ? t("pacsImport.importing") : t("pacsImport.start")}
            </button>
            {busy ? (
              <button type="button" className="secondary" onClick={() => abort.current?.abort()}>
                {t("pacsImport.cancel")}
              </button>
            ) : null}
          </div>
          {progress && (busy || result) ? (
            <div className="upload-progress" aria-live="polite">
              <progress max={100} value={result ? 100 : pct} aria-label={t("pacsImport.progress")} />
              <span data-testid="pacs-import-status">
                {result
                  ? t("pacsImport.finished", {
                      instances: formatCount(result.instances),
                      rows: formatCount(result.rows),
                      failed: formatCount(result.failed.length),
                    })
                  : t(`pacsImport.phase.${progress.phase}`, {
                      done: formatCount(progress.done),
                      total: formatCount(progress.total),
                      failed: formatCount(progress.failed),
                    })}
              </span>
            </div>
          ) : null}
          {failed.length ? (
            <div className="error" role="status" data-testid="pacs-import-failed">
              <strong>{t("pacsImport.failedTitle", { count: failed.length })}</strong>
              <ul>
                {[...failed]
                  .sort((a, b) => a.row - b.row)
                  .slice(0, 50)
                  .map((f) => (
                    <li key={`${f.row}-${f.uid}`}>
                      {t("pacsImport.failedRow", { row: f.row, uid: f.uid, reason: spanish ? f.reason_es : f.reason })}
                    </li>
                  ))}
              </ul>
              {failed.length > 50 ? <p className="small">{t("pacsImport.failedMore", { count: failed.length - 50 })}</p> : null}
            </div>
          ) : null}
          <ErrorBox error={error} title={t("pacsImport.failed")} />
        </>
      )}
    </details>
  );
}
