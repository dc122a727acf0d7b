import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/typed";
import { formatCount } from "../../lib/format";
import { OUTCOMES_PER_CALL, OutcomesCsvError, parseOutcomesCsv } from "../../lib/outcomes-csv";
import { ErrorBox } from "../ui";

interface Result {
  received: number;
  matched: number;
  unmatched: string[];
}

/**
 * Sends true outcomes from a CSV (request_id, label) to POST /v1/models/{id}/outcomes, in parts of the API's limit.
 * The file is read in the browser and only those two columns are sent; a wrong row is named before anything is sent.
 */
export function OutcomesUpload({ experimentId, onPosted }: { experimentId: number; onPosted: () => void }) {
  const { t } = useTranslation("monitoring");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<Result | null>(null);

  const upload = async (file: File) => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const rows = parseOutcomesCsv(await file.text());
      const total: Result = { received: 0, matched: 0, unmatched: [] };
      for (let i = 0; i < rows.length; i += OUTCOMES_PER_CALL) {
        const r = await call("post", "/v1/models/{experiment_id}/outcomes", {
          path: { experiment_id: experimentId },
          body: rows.slice(i, i + OUTCOMES_PER_CALL),
        });
        total.received += r.received;
        total.matched += r.matched;
        total.unmatched.push(...r.unmatched);
      }
      setResult(total);
      onPosted();
    } catch (err) {
      setError(err instanceof OutcomesCsvError ? err.message : err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="outcomes-upload-title" data-testid="outcomes-upload">
      <h3 id="outcomes-upload-title">{t("upload.title")}</h3>
      <p className="muted small">{t("upload.intro")}</p>
      <pre className="small">
        <code>{"request_id,label\n3f0c6a1e-…,1\na9d27b40-…,0"}</code>
      </pre>
      <label>
        {t("upload.choose")}
        <input
          type="file"
          accept=".csv,text/csv"
          disabled={busy}
          data-testid="outcomes-file"
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = "";
            if (f) void upload(f);
          }}
        />
      </label>
      {busy ? <p aria-busy="true">{t("upload.sending")}</p> : null}
      {result ? (
        <p role="status" data-testid="outcomes-result">
          {t("upload.result", { received: formatCount(result.received), matched: formatCount(result.matched) })}
          {result.unmatched.length ? (
            <>
              {" "}
              {t("upload.unmatched", { n: formatCount(result.unmatched.length) })}{" "}
              <code className="small">{result.unmatched.slice(0, 5).join(", ")}</code>
              {result.unmatched.length > 5 ? " …" : null}
            </>
          ) : null}
        </p>
      ) : null}
      <ErrorBox error={error} title={t("upload.failed")} />
    </section>
  );
}
