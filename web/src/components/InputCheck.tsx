import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { InputCheckBody, InputCheckSetting } from "../api/types";
import { formatPercent } from "../lib/format";
import { NotAllowedNote, usePermission } from "../workspace";
import { ErrorBox } from "./ui";

type Mode = InputCheckBody["mode"];

/**
 * The model's unfamiliar-input setting (issue 49 item 5; docs/prediction.md#unfamiliar-inputs): flag (answer, and
 * say so in x-input-check) or refuse (422, "error": 1). Saving publishes a new model version, as the operating point
 * does, so the page's history and versions are refreshed through onChanged.
 */
export function InputCheckPanel({ experimentId, onChanged }: { experimentId: number; onChanged: () => void }) {
  const { t } = useTranslation("result");
  const [setting, setSetting] = useState<InputCheckSetting | null>(null);
  const [chosen, setChosen] = useState<Mode>("flag");
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  // A new version (operating point, input check) is operating_point.set: owners and editors.
  const canSet = usePermission("operating_point.set");

  const load = useCallback(async () => {
    try {
      const s = await call("get", "/v1/models/{experiment_id}/input-check", { path: { experiment_id: experimentId } });
      setSetting(s);
      if (s.mode) setChosen(s.mode);
    } catch (err) {
      setError(err);
    }
  }, [experimentId]);
  useEffect(() => void load(), [load]);

  if (!setting) return error ? <ErrorBox error={error} /> : null;
  const section = (children: React.ReactNode) => (
    <section className="card" aria-label={t("check.title")} data-testid="input-check">
      <h2>{t("check.title")}</h2>
      {children}
    </section>
  );
  if (!setting.available) return section(<p className="muted">{t("check.unavailable")}</p>);

  const save = async () => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const body: InputCheckBody = { mode: chosen };
      const s = await call("put", "/v1/models/{experiment_id}/input-check", { path: { experiment_id: experimentId }, body });
      setSetting(s);
      setSaved(s.version);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const rows = setting.checks === "table";
  return section(
    <>
      <p className="muted small">
        {t(rows ? "check.introRows" : "check.introImages")}
        {setting.test_flagged_rate !== null
          ? ` ${t(rows ? "check.testRateRows" : "check.testRateImages", { rate: formatPercent(setting.test_flagged_rate) })}`
          : null}
      </p>
      <fieldset>
        <legend>{t("check.legend")}</legend>
        {(["flag", "refuse"] as const).map((m) => (
          <label key={m} className="check">
            <input
              type="radio"
              name="input-check-mode"
              value={m}
              checked={chosen === m}
              disabled={!canSet.allowed}
              onChange={() => setChosen(m)}
            />
            <span>
              <strong>{t(`check.${m}`)}</strong>
              {setting.mode === m ? <span className="muted small"> {t("check.current")}</span> : null}
              <br />
              <span className="muted small">{t(`check.${m}Explained`)}</span>
            </span>
          </label>
        ))}
      </fieldset>
      {canSet.allowed ? (
        <button type="button" onClick={() => void save()} disabled={busy || chosen === setting.mode} data-testid="input-check-save">
          {t("check.save")}
        </button>
      ) : (
        <NotAllowedNote allowance={canSet} />
      )}
      {saved !== null ? (
        <p role="status" data-testid="input-check-saved">
          {t("check.saved", { version: saved, mode: t(`check.${setting.mode ?? "flag"}`) })}
        </p>
      ) : null}
      <ErrorBox error={error} />
    </>,
  );
}
