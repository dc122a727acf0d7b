import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { PacsAutoScoreState } from "../api/types";
import { formatDate } from "../lib/format";
import { navigate } from "../lib/router";
import { usePacs } from "../pages/SettingsPacs";
import { ErrorBox } from "./ui";

/**
 * The model's rule for scoring new PACS studies as they arrive (docs/pacs.md#scoring-new-studies-as-they-arrive):
 * on or off, and which instances it takes (modality, body part, series description; blank: any). Below it, the last
 * instances scored, each sent (with its report's UID) or failed with the reason, so a failure is seen here.
 */
export function PacsAutoScorePanel({ experimentId, image }: { experimentId: number; image: boolean }) {
  const { t } = useTranslation("result");
  const pacs = usePacs();
  const [state, setState] = useState<PacsAutoScoreState | null>(null);
  const [enabled, setEnabled] = useState(false);
  const [modality, setModality] = useState("");
  const [bodyPart, setBodyPart] = useState("");
  const [series, setSeries] = useState("");
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const show = (s: PacsAutoScoreState) => {
    setState(s);
    setEnabled(s.enabled);
    setModality(s.modality ?? "");
    setBodyPart(s.body_part ?? "");
    setSeries(s.series_description ?? "");
  };
  const load = useCallback(async () => {
    try {
      show(await call("get", "/v1/models/{experiment_id}/pacs/auto-score", { path: { experiment_id: experimentId } }));
    } catch (err) {
      setError(err);
    }
  }, [experimentId]);
  useEffect(() => {
    if (image && pacs) void load();
  }, [image, pacs, load]);

  if (!image || pacs === undefined) return null;
  const section = (children: React.ReactNode) => (
    <section className="card" aria-label={t("autoScore.title")} data-testid="pacs-auto-score">
      <h2>{t("autoScore.title")}</h2>
      {children}
    </section>
  );
  if (pacs === null)
    return section(
      <p className="muted small">
        {t("autoScore.noPacs")}{" "}
        <button type="button" className="link" onClick={() => navigate("/settings/pacs")}>
          {t("autoScore.toSettings")}
        </button>
      </p>,
    );
  if (!state) return section(<ErrorBox error={error} />);

  const save = async () => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const body = {
        enabled,
        modality: modality.trim() || null,
        body_part: bodyPart.trim() || null,
        series_description: series.trim() || null,
      };
      const s = await call("put", "/v1/models/{experiment_id}/pacs/auto-score", { path: { experiment_id: experimentId }, body });
      show({ ...s, recent: state.recent });
      setSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const failed = state.recent.filter((r) => r.outcome === "failed").length;
  return section(
    <>
      <p className="muted small">{t("autoScore.intro", { url: pacs.dicomweb_url })}</p>
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} data-testid="auto-score-enabled" />
        <span>
          <strong>{t("autoScore.enabled")}</strong>
          {state.enabled ? <span className="muted small"> {t("autoScore.onNow")}</span> : null}
        </span>
      </label>
      <div className="grid2">
        <label>
          {t("autoScore.modality")}
          <input
            value={modality}
            maxLength={16}
            placeholder={t("autoScore.any")}
            onChange={(e) => setModality(e.target.value)}
            data-testid="auto-score-modality"
          />
        </label>
        <label>
          {t("autoScore.bodyPart")}
          <input
            value={bodyPart}
            maxLength={64}
            placeholder={t("autoScore.any")}
            onChange={(e) => setBodyPart(e.target.value)}
            data-testid="auto-score-body-part"
          />
        </label>
        <label>
          {t("autoScore.series")}
          <input
            value={series}
            maxLength={64}
            placeholder={t("autoScore.any")}
            onChange={(e) => setSeries(e.target.value)}
            data-testid="auto-score-series"
          />
        </label>
      </div>
      <p className="muted small">{t("autoScore.ruleHelp")}</p>
      <div className="actions">
        <button type="button" onClick={() => void save()} disabled={busy} data-testid="auto-score-save">
          {busy ? t("autoScore.saving") : t("autoScore.save")}
        </button>
        {saved ? (
          <span role="status" data-testid="auto-score-saved">
            {enabled ? t("autoScore.savedOn") : t("autoScore.savedOff")}
          </span>
        ) : null}
      </div>
      <ErrorBox error={error} title={t("autoScore.notSaved")} />
      <h3>{t("autoScore.recent")}</h3>
      {state.recent.length === 0 ? (
        <p className="muted small">{t("autoScore.none")}</p>
      ) : (
        <>
          {failed ? (
            <p className="error small" role="status" data-testid="auto-score-failures">
              {t("autoScore.failedCount", { count: failed })}
            </p>
          ) : null}
          <table data-testid="auto-score-recent">
            <thead>
              <tr>
                <th scope="col">{t("autoScore.colWhen")}</th>
                <th scope="col">{t("autoScore.colInstance")}</th>
                <th scope="col">{t("autoScore.colOutcome")}</th>
              </tr>
            </thead>
            <tbody>
              {state.recent.slice(0, 10).map((r) => (
                <tr key={`${r.sop_instance_uid}-${r.at}`}>
                  <td>{formatDate(r.at)}</td>
                  <td>
                    <code className="small">{r.sop_instance_uid}</code>
                  </td>
                  <td>
                    {r.outcome === "sent"
                      ? t("autoScore.sent", { uid: r.sr_instance_uid ?? "" })
                      : t("autoScore.failed", { reason: r.reason ?? t("autoScore.noReason") })}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>,
  );
}
