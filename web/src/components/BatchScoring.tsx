import { useCallback, useEffect, useState } from "react";
import { api, postFile } from "../api/client";
import type { Model, ResponseOf } from "../api/types";
import { formatDate } from "../lib/format";
import { ErrorBox } from "./ui";

// Score a whole file with the model (POST /v1/models/{id}/batch): a table of patients for a table model, a zip of
// images for an image model. The page follows the batch until it is done and offers results.csv.

type Batch = ResponseOf<"get_v1_batches_batch_id", 200>;

const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

function contentTypeOf(file: File, table: boolean): string | null {
  const name = file.name.toLowerCase();
  if (table) return name.endsWith(".csv") ? "text/csv" : name.endsWith(".xlsx") ? XLSX : null;
  return name.endsWith(".zip") ? "application/zip" : null;
}

export function BatchScoring({ id, model }: { id: number; model: Model }) {
  const table = model.kind === "tabular";
  const [batches, setBatches] = useState<Batch[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [sending, setSending] = useState(false);

  const load = useCallback(() => api<{ data: Batch[] }>("GET", `/v1/models/${id}/batches`).then((r) => setBatches(r.data), setError), [id]);
  useEffect(() => void load(), [load]);
  // Follow unfinished batches: a poll every second while any is queued or running.
  const running = batches.some((b) => b.status === "queued" || b.status === "running");
  useEffect(() => {
    if (!running) return;
    const t = setTimeout(() => void load(), 1000);
    return () => clearTimeout(t);
  }, [running, batches, load]);

  const send = async (file: File) => {
    setError(null);
    const type = contentTypeOf(file, table);
    if (!type) {
      setError(new Error(table ? "choose a .csv or .xlsx file of rows" : "choose a .zip of images"));
      return;
    }
    setSending(true);
    try {
      await postFile(`/v1/models/${id}/batch`, file, type);
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setSending(false);
    }
  };

  return (
    <section className="card" aria-label="Score a whole file" data-testid="batch-scoring">
      <h2>Score a whole file</h2>
      <p className="small">
        {table
          ? "A table with one row per patient (.csv, or an .xlsx's first sheet): the columns are found by name, category values as written in the training CSV; extra columns are ignored. Each row gets its scores in results.csv; a row with a problem gets the reason, and values outside the training range are flagged."
          : "A zip of images (.png, .jpg, .tif, ...): each image gets its scores in results.csv (no Grad-CAM maps: use the form above for one image's map)."}
      </p>
      <label>
        File to score
        <input
          type="file"
          accept={table ? ".csv,.xlsx" : ".zip"}
          disabled={sending}
          data-testid="batch-input"
          onChange={(e) => e.target.files?.[0] && void send(e.target.files[0])}
        />
      </label>
      <ErrorBox error={error} title="The file was not scored" />
      {batches.length ? (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Batches" data-testid="batches">
            <thead>
              <tr>
                <th scope="col">Sent</th>
                <th scope="col">Status</th>
                <th scope="col">Scored</th>
                <th scope="col">Without a score</th>
                <th scope="col">Flagged</th>
                <th scope="col">Results</th>
              </tr>
            </thead>
            <tbody>
              {batches.map((b) => (
                <tr key={b.batch_id}>
                  <td>{formatDate(b.created_at)}</td>
                  <td>{b.status === "failed" ? `failed: ${b.failure_reason ?? ""}` : b.status}</td>
                  <td>{b.total !== null ? `${b.done} of ${b.total}` : b.done}</td>
                  <td>{b.failed}</td>
                  <td>{b.flagged}</td>
                  <td>{b.results_url ? <a href={b.results_url}>results.csv</a> : "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
