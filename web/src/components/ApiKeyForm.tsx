import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { NewApiKey } from "../api/types";
import { ErrorBox } from "./ui";

const SCOPES = ["predict", "read", "build", "admin"] as const;
type Scope = (typeof SCOPES)[number];

interface ModelChoice {
  id: number;
  name: string;
}

/**
 * Settings → API's "Generate new key": a name, the scopes (predict ticked: the least a program needs, as the API's
 * own default), optionally only some models for predict, an expiry day and a rate limit. Calls onCreated with the
 * new key (its secret shown once by the page).
 */
export function ApiKeyForm({ defaultLimit, onCreated }: { defaultLimit: number | null; onCreated: (k: NewApiKey) => Promise<void> }) {
  const { t } = useTranslation("settings");
  const [name, setName] = useState("");
  const [limit, setLimit] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["predict"]);
  const [models, setModels] = useState<ModelChoice[] | null>(null);
  const [picked, setPicked] = useState<number[]>([]);
  const [expires, setExpires] = useState("");
  const [error, setError] = useState<unknown>(null);

  // The models a predict key may be limited to; a failure only hides the choice (the key then predicts with all).
  useEffect(() => {
    call("get", "/v1/models").then(
      (r) => setModels(r.data.flatMap((m) => (typeof m.experiment_id === "number" ? [{ id: m.experiment_id, name: m.name ?? "" }] : []))),
      () => setModels([]),
    );
  }, []);

  const toggle = <T,>(list: T[], item: T, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (!scopes.length) return setError(t("api.pickScope"));
    const body: { name: string; rate_limit_per_minute?: number; scopes: Scope[]; model_ids?: number[]; expires_at?: string } = {
      name: name.trim(),
      scopes,
    };
    if (limit.trim()) body.rate_limit_per_minute = Number(limit);
    if (scopes.includes("predict") && picked.length) body.model_ids = picked;
    // The key works through the whole chosen day, in the browser's time zone.
    if (expires) body.expires_at = new Date(`${expires}T23:59:59`).toISOString();
    try {
      await onCreated(await call("post", "/v1/api-keys", { body }));
      setName("");
      setLimit("");
      setScopes(["predict"]);
      setPicked([]);
      setExpires("");
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form onSubmit={submit} className="card key-form" aria-label={t("api.generate")}>
      <h2>{t("api.generate")}</h2>
      <ErrorBox error={error} />
      <div className="grid2">
        <label>
          {t("api.name")}
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder={t("api.namePlaceholder")} />
        </label>
        <label>
          {t("api.perMinute")}
          <input
            type="number"
            min={1}
            max={1000000}
            inputMode="numeric"
            value={limit}
            onChange={(e) => setLimit(e.target.value)}
            placeholder={defaultLimit === null ? t("api.serverDefault") : t("api.serverDefaultIs", { n: defaultLimit })}
          />
        </label>
      </div>
      <fieldset data-testid="key-scopes">
        <legend>{t("api.scopes")}</legend>
        <p className="muted">{t("api.scopesHelp")}</p>
        {SCOPES.map((s) => (
          <label className="check" key={s}>
            <input
              type="checkbox"
              name="scope"
              value={s}
              checked={scopes.includes(s)}
              onChange={(e) => setScopes(toggle(scopes, s, e.target.checked))}
            />{" "}
            {t(`api.scope.${s}`)}
          </label>
        ))}
      </fieldset>
      {scopes.includes("predict") ? (
        <fieldset data-testid="key-models">
          <legend>{t("api.models")}</legend>
          {models === null ? (
            <p aria-busy="true">{t("common:loading")}</p>
          ) : models.length === 0 ? (
            <p className="muted">{t("api.noModels")}</p>
          ) : (
            <>
              <p className="muted">{t("api.modelsHelp")}</p>
              <div className="checklist">
                {models.map((m) => (
                  <label className="check" key={m.id}>
                    <input
                      type="checkbox"
                      name="model"
                      value={m.id}
                      checked={picked.includes(m.id)}
                      onChange={(e) => setPicked(toggle(picked, m.id, e.target.checked))}
                    />{" "}
                    {t("api.modelLabel", { id: m.id, name: m.name })}
                  </label>
                ))}
              </div>
            </>
          )}
        </fieldset>
      ) : null}
      <label className="key-expiry">
        {t("api.expires")}
        <input type="date" value={expires} onChange={(e) => setExpires(e.target.value)} min={new Date().toISOString().slice(0, 10)} />
        <span className="muted">{t("api.expiresHelp")}</span>
      </label>
      <button type="submit">{t("api.generate")}</button>
    </form>
  );
}
