import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { postFile } from "../api/client";
import { usePacs } from "../pages/SettingsPacs";
import { call } from "../api/typed";
import type { Model, ResponseOf } from "../api/types";
import { formatCount, formatDate } from "../lib/format";
import { NotAllowedNote, usePermission } from "../workspace";
import { ErrorBox } from "./ui";

// Score a whole file with the model (POST /v1/models/{id}/batch): a table of patients for a table model, a zip of
// images for an image model, optionally with Grad-CAM overlays for an image classifier. The newest unfinished batch
// is followed live over its events stream (GET /v1/batches/{id}/events: progress, then done or failed); if the
// stream is refused (429 too_many_streams: the user's other tabs hold every slot) or keeps failing, the list is
// polled instead, as the experiment page does. Every batch of the model is listed with its downloads.

type Batch = ResponseOf<"get_v1_batches_batch_id", 200>;

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
const UNFINISHED = new Set(["queued", "running"]);

function contentTypeOf(file: File, table: boolean): string | null {
  const name = file.name.toLowerCase();
  if (table) return name.endsWith(".csv") ? "text/csv" : name.endsWith(".xlsx") ? XLSX : null;
  return name.endsWith(".zip") ? "application/zip" : null;
}

const count = (n: number) => formatCount(n);

/**
 * The model's batches, the newest unfinished one followed over its events stream. Polls (every second) only while
 * a batch is unfinished and no stream carries it.
 */
function useBatches(id: number) {
  const [batches, setBatches] = useState<Batch[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [streamed, setStreamed] = useState<string | null>(null);
  const load = useCallback(
    () => call("get", "/v1/models/{experiment_id}/batches", { path: { experiment_id: id } }).then((r) => setBatches(r.data), setError),
    [id],
  );
  useEffect(() => void load(), [load]);

  const live = batches.find((b) => UNFINISHED.has(b.status))?.batch_id ?? null;
  useEffect(() => {
    if (!live) return;
    let closed = false;
    let failures = 0;
    const source = new EventSource(`/v1/batches/${live}/events`);
    const update = (m: MessageEvent) => {
      failures = 0;
      setStreamed(live);
      const b = JSON.parse(m.data as string) as Batch;
      setBatches((list) => list.map((x) => (x.batch_id === b.batch_id ? b : x)));
    };
    source.addEventListener("progress", update);
    const end = (m: MessageEvent) => {
      update(m);
      source.close();
      setStreamed(null);
      void load(); // the next unfinished batch, if any, is followed next
    };
    source.addEventListener("done", end);
    source.addEventListener("failed", end);
    source.addEventListener("deleted", () => (source.close(), setStreamed(null), void load()));
    source.onerror = () => {
      if (closed) return;
      // CLOSED: refused (e.g. 429 too_many_streams); EventSource never retries that by itself. Three failures in a
      // row: give up on the stream. Either way the poll below takes over.
      if (source.readyState === EventSource.CLOSED || ++failures >= 3) {
        source.close();
        setStreamed(null);
      }
    };
    return () => {
      closed = true;
      source.close();
    };
  }, [live, load]);

  // The fallback: a poll every second while a batch is unfinished and no stream carries it (or another is unfinished).
  const unfinished = batches.filter((b) => UNFINISHED.has(b.status));
  const needsPoll = unfinished.some((b) => b.batch_id !== streamed);
  useEffect(() => {
    if (!needsPoll) return;
    const t = setTimeout(() => void load(), 1000);
    return () => clearTimeout(t);
  }, [needsPoll, batches, load]);

  return { batches, error, load, setError, streaming: streamed !== null };
}

function Downloads({ b }: { b: Batch }) {
  if (!b.results_url) return <>–</>;
  return (
    <span className="downloads">
      <a href={b.results_url} download>
        results.csv
      </a>
      {b.overlays_url ? (
        <a href={b.overlays_url} download data-testid="overlays-link">
          overlays.zip
        </a>
      ) : null}
    </span>
  );
}

/** The batch just sent (or the newest), in words: a progress bar while it runs, its outcome and downloads after. */
function Current({ b, unit, streaming }: { b: Batch; unit: "row" | "image"; streaming: boolean }) {
  const { t } = useTranslation("tryit");
  const units = (n: number) => t(`batch.${unit}`, { count: n, n: count(n) });
  if (b.status === "queued")
    return (
      <p className="batch-current" aria-live="polite" data-testid="batch-progress">
        {t("batch.waiting")}
      </p>
    );
  if (b.status === "running") {
    const pct = b.total ? Math.floor((100 * b.done) / b.total) : null;
    return (
      <div className="batch-current upload-progress" aria-live="polite" data-testid="batch-progress">
        <progress max={b.total ?? undefined} value={b.total ? b.done : undefined} aria-label={t("batch.progress")} />
        <span>
          {t("batch.scoring")}{" "}
          {b.total !== null ? t("batch.nOf", { n: count(b.done), total: units(b.total) }) : t("batch.soFar", { units: units(b.done) })}
          {pct !== null ? ` (${pct}%)` : ""}
          {b.failed ? ` · ${t("batch.withoutSoFar", { n: count(b.failed) })}` : ""}
          {b.overlays ? ` · ${t("batch.withOverlays")}` : ""}
          {streaming ? "" : ` · ${t("batch.everySecond")}`}
        </span>
      </div>
    );
  }
  if (b.status === "failed")
    return (
      <p className="batch-current" role="alert" data-testid="batch-progress">
        {t("batch.notScored")}: {b.failure_reason ?? t("batch.noReason")}
      </p>
    );
  return (
    <div className="batch-current" aria-live="polite" data-testid="batch-progress">
      <p>
        <strong>{t("batch.done")}</strong> {t("batch.doneScored", { units: units(b.done), n: count(b.done - b.failed) })}
        {b.failed ? `, ${t("batch.doneWithout", { n: count(b.failed) })}` : ""}
        {b.flagged ? `, ${t("batch.doneFlagged", { n: count(b.flagged) })}` : ""}.
        {b.send_back ? (
          <>
            {" "}
            <span data-testid="batch-pacs">
              {t("batch.pacsSent", { count: b.pacs_sent, n: count(b.pacs_sent) })}
              {b.pacs_failed ? ` ${t("batch.pacsFailed", { count: b.pacs_failed, n: count(b.pacs_failed) })}` : ""}
            </span>
          </>
        ) : null}
      </p>
      <p className="actions">
        <a className="button" href={b.results_url ?? undefined} download data-testid="results-download">
          {t("batch.downloadResults")}
        </a>
        {b.overlays_url ? (
          <a className="button secondary" href={b.overlays_url} download data-testid="overlays-download">
            {t("batch.downloadOverlays")}
          </a>
        ) : null}
      </p>
    </div>
  );
}

export function BatchScoring({ id, model }: { id: number; model: Model }) {
  const { t } = useTranslation("tryit");
  const table = model.kind === "tabular";
  const canOverlay = model.kind === "vision_classification" && model.problem !== "regression";
  const unit = table ? "row" : "image";
  const { batches, error, load, setError, streaming } = useBatches(id);
  const [sending, setSending] = useState(false);
  const [overlays, setOverlays] = useState(false);
  const [sendBack, setSendBack] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const pacs = usePacs();
  // Sending a file is batch.run (owners and editors); anyone in the workspace sees the batches and downloads them.
  const canRun = usePermission("batch.run");

  const send = async (file: File) => {
    setError(null);
    const type = contentTypeOf(file, table);
    if (!type) {
      setError(new Error(table ? t("batch.chooseTable") : t("batch.chooseZip")));
      return;
    }
    setSending(true);
    try {
      const query = new URLSearchParams({ file_name: file.name.slice(0, 255) });
      if (canOverlay && overlays) query.set("overlays", "true");
      if (!table && pacs && sendBack) query.set("send_back", "true");
      const b = await postFile<Batch>(`/v1/models/${id}/batch?${query}`, file, type);
      setSent(b.batch_id);
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setSending(false);
    }
  };
  // The file sent from this page, or (after a reload) the newest batch still being scored.
  const current = batches.find((b) => b.batch_id === sent) ?? batches.find((b) => UNFINISHED.has(b.status)) ?? null;

  return (
    <section className="card" aria-label={t("batch.title")} data-testid="batch-scoring">
      <h2>{t("batch.title")}</h2>
      <p className="small">
        {table ? t("batch.introTable") : model.kind === "detection" ? t("batch.introDetection") : t("batch.introImages")}
      </p>
      <NotAllowedNote allowance={canRun} />
      {canOverlay && canRun.allowed ? (
        <label className="check">
          <input type="checkbox" checked={overlays} onChange={(e) => setOverlays(e.target.checked)} data-testid="batch-overlays" />
          {t("batch.overlays")}
        </label>
      ) : null}
      {!table && pacs && canRun.allowed ? (
        <label className="check">
          <input type="checkbox" checked={sendBack} onChange={(e) => setSendBack(e.target.checked)} data-testid="batch-send-back" />
          {t("batch.sendBack", { url: pacs.dicomweb_url })}
        </label>
      ) : null}
      {canRun.allowed ? (
        <label>
          {t("batch.file")}
          <input
            type="file"
            accept={table ? ".csv,.xlsx" : ".zip"}
            disabled={sending}
            data-testid="batch-input"
            onChange={(e) => {
              const f = e.target.files?.[0];
              e.target.value = ""; // the same file can be sent again
              if (f) void send(f);
            }}
          />
        </label>
      ) : null}
      {sending ? <p aria-busy="true">{t("batch.sending")}</p> : null}
      <ErrorBox error={error} title={t("batch.notScored")} />
      {current ? <Current b={current} unit={unit} streaming={streaming} /> : null}
      {batches.length ? (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label={t("batch.files")} data-testid="batches">
            <caption>{t("batch.filesCaption")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("batch.colFile")}</th>
                <th scope="col">{t("batch.colSent")}</th>
                <th scope="col">{t("batch.colStatus")}</th>
                <th scope="col">{table ? t("batch.colRows") : t("batch.colImages")}</th>
                <th scope="col">{t("batch.colWithout")}</th>
                {table ? <th scope="col">{t("batch.colFlagged")}</th> : null}
                <th scope="col">{t("batch.colDownloads")}</th>
              </tr>
            </thead>
            <tbody>
              {batches.map((b) => (
                <tr key={b.batch_id}>
                  <td className="file-name">{b.file_name ?? t("batch.byProgram")}</td>
                  <td>{formatDate(b.created_at)}</td>
                  <td>
                    {b.status === "failed"
                      ? t("batch.failedWhy", { why: b.failure_reason ?? "" })
                      : t(`batch.status.${b.status}`, { defaultValue: b.status })}
                  </td>
                  <td>
                    {b.status === "queued"
                      ? "–"
                      : b.total !== null
                        ? t("batch.nOf", { n: count(b.done), total: count(b.total) })
                        : count(b.done)}
                  </td>
                  <td>{count(b.failed)}</td>
                  {table ? <td>{count(b.flagged)}</td> : null}
                  <td>
                    <Downloads b={b} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
