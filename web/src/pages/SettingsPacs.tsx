import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import { ErrorBox } from "../components/ui";

/** GET /v1/pacs's connection (the password is never sent back, only whether one is kept). */
export interface PacsConnection {
  dicomweb_url: string;
  username: string | null;
  has_password: boolean;
  caption: string | null;
  secondary_capture: boolean;
  updated_at: string;
}

/** The user's PACS connection, or null when none is configured (undefined while loading). */
export function usePacs(): PacsConnection | null | undefined {
  const [pacs, setPacs] = useState<PacsConnection | null | undefined>(undefined);
  useEffect(() => {
    call("get", "/v1/pacs").then(
      (r) => setPacs(r.pacs),
      () => setPacs(null),
    );
  }, []);
  return pacs;
}

/** Settings → PACS: the DICOMweb address, the credentials (kept sealed, never shown), the caption, Test connection. */
export function PacsPage() {
  const { t } = useTranslation("settings");
  const [loaded, setLoaded] = useState<PacsConnection | null | undefined>(undefined);
  const [url, setUrl] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [caption, setCaption] = useState("");
  const [capture, setCapture] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [test, setTest] = useState<{ ok: boolean; message: string } | null>(null);

  const show = (p: PacsConnection | null) => {
    setLoaded(p);
    setUrl(p?.dicomweb_url ?? "");
    setUsername(p?.username ?? "");
    setCaption(p?.caption ?? "");
    setCapture(p?.secondary_capture ?? true);
    setPassword("");
  };
  useEffect(() => {
    call("get", "/v1/pacs").then((r) => show(r.pacs), setError);
  }, []);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    setTest(null);
    try {
      const body = {
        dicomweb_url: url,
        username: username || null,
        // Blank keeps the password kept; it is never shown.
        ...(password ? { password } : {}),
        caption: caption || null,
        secondary_capture: capture,
      };
      show((await call("put", "/v1/pacs", { body })).pacs);
      setSaved(true);
    } catch (err) {
      setError(err);
    }
  };
  const runTest = async () => {
    setError(null);
    setTest(null);
    try {
      setTest(await call("post", "/v1/pacs/test"));
    } catch (err) {
      setError(err);
    }
  };
  const remove = async () => {
    if (!window.confirm(t("pacs.removeConfirm"))) return;
    setError(null);
    try {
      await call("delete", "/v1/pacs");
      show(null);
      setSaved(false);
      setTest(null);
    } catch (err) {
      setError(err);
    }
  };

  if (loaded === undefined && !error) return <p aria-busy="true">…</p>;
  return (
    <section>
      <h1>{t("pacs.title")}</h1>
      <p className="muted">{t("pacs.intro")}</p>
      <form onSubmit={save} className="card narrow" aria-label={t("pacs.title")}>
        <label>
          {t("pacs.url")}
          <input
            type="url"
            required
            placeholder="https://pacs.hospital.example/dicom-web"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            data-testid="pacs-url"
          />
        </label>
        <label>
          {t("pacs.username")}
          <input autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} data-testid="pacs-username" />
        </label>
        <label>
          {t("pacs.password")}
          <input
            type="password"
            autoComplete="new-password"
            placeholder={loaded?.has_password ? t("pacs.passwordKept") : ""}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            data-testid="pacs-password"
          />
        </label>
        <p className="muted small">{t("pacs.passwordHelp")}</p>
        <label>
          {t("pacs.caption")}
          <input
            maxLength={200}
            placeholder="NOT FOR DIAGNOSIS - research use only"
            value={caption}
            onChange={(e) => setCaption(e.target.value)}
            data-testid="pacs-caption"
          />
        </label>
        <label className="check">
          <input type="checkbox" checked={capture} onChange={(e) => setCapture(e.target.checked)} data-testid="pacs-capture" />{" "}
          {t("pacs.secondaryCapture")}
        </label>
        <ErrorBox error={error} />
        {saved ? (
          <p className="ok" role="status">
            {t("pacs.saved")}
          </p>
        ) : null}
        {test ? (
          <p className={test.ok ? "ok" : "field-warning"} role="status" data-testid="pacs-test-result">
            {test.ok ? t("pacs.testOk") : t("pacs.testFailed", { message: test.message })}
          </p>
        ) : null}
        <div className="row">
          <button type="submit">{t("pacs.save")}</button>{" "}
          <button type="button" onClick={() => void runTest()} disabled={!loaded} data-testid="pacs-test">
            {t("pacs.test")}
          </button>{" "}
          {loaded ? (
            <button type="button" className="danger" onClick={() => void remove()}>
              {t("pacs.remove")}
            </button>
          ) : null}
        </div>
      </form>
      <div className="card narrow">
        <h2>{t("pacs.writesTitle")}</h2>
        <p className="muted small">{t("pacs.writes")}</p>
      </div>
    </section>
  );
}
