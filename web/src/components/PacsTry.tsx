import { useEffect, useState, type FormEvent, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Prediction } from "../api/types";
import { usePacs } from "../pages/SettingsPacs";
import { ErrorBox, Link } from "./ui";

/**
 * Try it on an image of the PACS: its WADO-RS link, predicted as a program would (POST .../predict), with
 * "Send to PACS" (send_back=true: the SR and the captured image go into the image's study), and the model's
 * setting that sends every answer on a PACS link back. Shown once a PACS is configured (Settings → PACS).
 */
export function PacsTry({ id, render }: { id: number; render: (r: Prediction) => ReactNode }) {
  const { t } = useTranslation("tryit");
  const pacs = usePacs();
  const [url, setUrl] = useState("");
  const [send, setSend] = useState(true);
  const [always, setAlways] = useState<boolean | null>(null);
  const [result, setResult] = useState<{ r: Prediction; sent: boolean } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    call("get", "/v1/models/{experiment_id}/pacs", { path: { experiment_id: id } }).then(
      (r) => setAlways(r.send_back),
      () => setAlways(null),
    );
  }, [id]);

  if (pacs === undefined) return null;
  if (pacs === null)
    return (
      <p className="muted small">
        {t("pacs.none")} <Link to="/settings/pacs">{t("pacs.configure")}</Link>
      </p>
    );

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setResult(null);
    setBusy(true);
    try {
      const r = await call("post", "/v1/experiments/{experiment_id}/predict", {
        path: { experiment_id: id },
        query: { send_back: send ? "true" : "false" },
        body: { message: url.trim() },
      });
      setResult({ r, sent: send });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toggleAlways = async (on: boolean) => {
    setError(null);
    try {
      setAlways((await call("put", "/v1/models/{experiment_id}/pacs", { path: { experiment_id: id }, body: { send_back: on } })).send_back);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form onSubmit={submit} aria-label={t("pacs.title")} className="card">
      <h3>{t("pacs.title")}</h3>
      <label>
        {t("pacs.link")}
        <input
          type="url"
          required
          placeholder={`${pacs.dicomweb_url}/studies/…/series/…/instances/…`}
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          data-testid="pacs-link"
        />
      </label>
      <label className="check">
        <input type="checkbox" checked={send} onChange={(e) => setSend(e.target.checked)} data-testid="pacs-send" /> {t("pacs.send")}
      </label>
      {always !== null ? (
        <label className="check">
          <input type="checkbox" checked={always} onChange={(e) => void toggleAlways(e.target.checked)} data-testid="pacs-always" />{" "}
          {t("pacs.always")}
        </label>
      ) : null}
      <button type="submit" disabled={busy}>
        {t("pacs.predict")}
      </button>
      {busy ? <p aria-busy="true">{t("try.predicting")}</p> : null}
      <ErrorBox error={error} title={t("try.failed")} />
      {result ? (
        <>
          {result.sent ? (
            <p className="ok" role="status" data-testid="pacs-sent">
              {t("pacs.sent")}
            </p>
          ) : null}
          {render(result.r)}
        </>
      ) : null}
    </form>
  );
}
