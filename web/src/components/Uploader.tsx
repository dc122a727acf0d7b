import { useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { uploadZip, type UploadProgress } from "../api/client";
import type { UploadResult } from "../api/types";
import { formatBytes } from "../lib/format";
import { ErrorBox } from "./ui";

/**
 * A bucket path for the upload inside the caller's folder: letters, digits, '.', '-' and '_' only. A .csv or .xlsx
 * keeps its extension (the server stores a zip of it); anything else is sent as a .zip (the server checks it is one).
 */
export function uploadPath(fileName: string, now = Date.now()): string {
  const extension = /\.(csv|xlsx)$/i.exec(fileName)?.[1]?.toLowerCase() ?? "zip";
  const base =
    fileName
      .replace(/\.(zip|csv|xlsx)$/i, "")
      .replace(/[^A-Za-z0-9._-]+/g, "_")
      .replace(/^[._]+/, "")
      .slice(0, 80) || "dataset";
  return `upload-${now.toString(36)}/${base}.${extension}`;
}

/** Pick or drop a zip; upload with a real progress bar (bytes, speed), cancel, and retry after a failure. */
/** onStart: a new upload begins, so whatever the page showed of the previous zip no longer applies. */
export function Uploader({ onUploaded, onStart }: { onUploaded: (r: UploadResult, file: File) => void; onStart?: () => void }) {
  const { t } = useTranslation("dataset");
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const abort = useRef<() => void>(() => {});

  const start = async (f: File) => {
    onStart?.();
    setFile(f);
    setError(null);
    setNote(null);
    setBusy(true);
    setProgress({ loaded: 0, total: f.size, speed: 0 });
    const u = uploadZip(f, uploadPath(f.name), setProgress);
    abort.current = u.abort;
    try {
      const stored = await u.done;
      // A small file may finish before the browser reports any progress: the bar ends full either way.
      setProgress((p) => ({ loaded: stored.size, total: stored.size, speed: p?.speed ?? 0 }));
      setNote(stored.note ?? null);
      onUploaded(stored, f);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const pct = progress && progress.total ? Math.round((progress.loaded / progress.total) * 100) : 0;
  return (
    <div
      className={`dropzone${dragging ? " dragging" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        const f = e.dataTransfer.files[0];
        if (f && !busy) void start(f);
      }}
    >
      <label>
        {t("upload.label")}
        <input
          type="file"
          accept=".zip,.csv,.xlsx,application/zip,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
          disabled={busy}
          data-testid="zip-input"
          onChange={(e) => e.target.files?.[0] && start(e.target.files[0])}
        />
      </label>
      <p className="muted small">{t("upload.drop")}</p>
      {progress ? (
        <div className="upload-progress" aria-live="polite">
          <progress max={100} value={pct} aria-label={t("upload.progress")} />
          <span data-testid="upload-status">
            {t("upload.status", { pct, loaded: formatBytes(progress.loaded), total: formatBytes(progress.total) })}
            {busy && progress.speed > 0 ? ` · ${formatBytes(progress.speed)}/s` : ""}
            {!busy && !error ? ` · ${t("upload.uploaded")}` : ""}
          </span>
          {busy ? (
            <button type="button" className="secondary" onClick={() => abort.current()}>
              {t("upload.cancel")}
            </button>
          ) : null}
        </div>
      ) : null}
      {note ? (
        <p className="muted small" role="status" data-testid="upload-note">
          {note}
        </p>
      ) : null}
      <ErrorBox error={error} title={t("upload.failed")} />
      {error && file && !busy ? (
        <button type="button" onClick={() => start(file)}>
          {t("upload.retry")}
        </button>
      ) : null}
    </div>
  );
}
