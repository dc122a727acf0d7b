import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { ApiKey, NewApiKey } from "../api/types";
import { CopyButton, ErrorBox } from "../components/ui";
import { ApiKeyForm } from "../components/ApiKeyForm";
import { formatDate, formatDay } from "../lib/format";
import { useWorkspace } from "../workspace";

/**
 * Settings → API: the seed's path for keys. List (scopes, models, expiry, who made it, last use), generate with
 * scopes (shown once), revoke (with a confirmation). Keys made before scopes say that they keep full access.
 * An owner of the workspace sees every member's keys and may revoke any (the API decides: `every_member`).
 */
export function ApiKeysPage() {
  const { t } = useTranslation("settings");
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [defaultLimit, setDefaultLimit] = useState<number | null>(null);
  const [everyMember, setEveryMember] = useState(false);
  // In a personal workspace every key is one's own: "your keys" says it; a shared one's owner sees the team's.
  const { current } = useWorkspace();
  const teamKeys = everyMember && current?.personal === false;
  const [showRevoked, setShowRevoked] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const [confirming, setConfirming] = useState<ApiKey | null>(null);

  const load = useCallback(
    () =>
      call("get", "/v1/api-keys").then((r) => {
        setKeys(r.data);
        setEveryMember(r.every_member);
        setDefaultLimit(r.default_rate_limit_per_minute);
      }, setError),
    [],
  );
  // Revoked keys stay listed by the API (they explain a program's sudden 403); the page hides them unless asked.
  const revokedCount = keys?.filter((k) => k.revoked_at).length ?? 0;
  const shown = keys?.filter((k) => showRevoked || !k.revoked_at) ?? null;
  useEffect(() => void load(), [load]);

  const onCreated = async (k: NewApiKey) => {
    setCreated(k);
    await load();
  };
  /** Who made the key, in words: you, a colleague's e-mail, or a former member (who left the workspace). */
  const maker = (k: ApiKey) =>
    k.made_by_you ? t("api.madeByYou") : k.created_by ? t("api.madeBy", { email: k.created_by }) : t("api.madeByFormer");
  const activeLegacy = keys?.filter((k) => k.legacy_full_access && !k.revoked_at).length ?? 0;

  const revoke = async (k: ApiKey) => {
    setError(null);
    try {
      await call("delete", "/v1/api-keys/{id}", { path: { id: k.id } });
      setConfirming(null);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>{t("api.title")}</h1>
      <p>
        {t("api.introBefore")} (<code>Authorization: Bearer &lt;{t("api.keyWord")}&gt;</code>). {t("api.introAfter")}
      </p>
      <ErrorBox error={error} />
      {created ? (
        <div className="note key-once" role="status" data-testid="new-key">
          <h2>{t("api.newKey", { name: created.name })}</h2>
          <p>
            <strong>{t("api.copyNow")}</strong> {t("api.hashOnly")}{" "}
            {created.scopes ? t("api.newKeyScopes", { scopes: created.scopes.join(", ") }) : null}
          </p>
          <div className="key-row">
            <code className="secret" data-testid="new-key-value">
              {created.key}
            </code>
            <CopyButton text={created.key} label={t("api.copyKey")} />
          </div>
          <ul>
            <li>{t("api.tipSecret")}</li>
            <li>
              {t("api.tipEnvBefore")} (<code>export BUILDER_API_KEY=…</code>){t("api.tipEnvAfter")}
            </li>
            <li>{t("api.tipRotate")}</li>
            <li>{t("api.tipLeak")}</li>
          </ul>
          <button type="button" className="secondary" onClick={() => setCreated(null)}>
            {t("api.stored")}
          </button>
        </div>
      ) : null}
      <ApiKeyForm defaultLimit={defaultLimit} onCreated={onCreated} />
      <h2>{teamKeys ? t("api.workspaceKeys") : t("api.yourKeys")}</h2>
      {teamKeys ? (
        <p className="muted" data-testid="every-member-keys">
          {t("api.everyMemberNote")}
        </p>
      ) : null}
      {revokedCount > 0 ? (
        <label className="check">
          <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} />{" "}
          {t("api.showRevoked", { n: revokedCount })}
        </label>
      ) : null}
      {activeLegacy > 0 ? (
        <p className="note" data-testid="legacy-keys">
          {t("api.legacyNote", { count: activeLegacy })}
        </p>
      ) : null}
      {keys === null || shown === null ? (
        <p aria-busy="true">{t("common:loading")}</p>
      ) : keys.length === 0 ? (
        <p>{t("api.noKeys")}</p>
      ) : shown.length === 0 ? (
        <p>{t("api.noActive")}</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label={t("api.keys")} data-testid="keys" className="keys-table">
            <thead>
              <tr>
                <th scope="col">
                  {t("api.name")} / {t("api.prefix")}
                </th>
                <th scope="col">{t("api.scopesCol")}</th>
                <th scope="col">{t("api.modelsCol")}</th>
                <th scope="col">{t("api.created")}</th>
                <th scope="col">{t("api.lastUsed")}</th>
                <th scope="col">{t("api.expiresCol")}</th>
                <th scope="col">{t("api.limit")}</th>
                <th scope="col">{t("api.status")}</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <tr key={k.id} className={k.revoked_at ? "revoked" : undefined} data-key-name={k.name}>
                  <td>
                    {k.name}
                    <br />
                    <code className="small">{k.prefix}…</code>
                  </td>
                  <td data-testid="key-scopes-cell">
                    {k.scopes ? (
                      k.scopes.map((s) => (
                        <span className="badge" key={s}>
                          {t(`api.scopeShort.${s}`)}
                        </span>
                      ))
                    ) : (
                      <span className="badge status-failed">{t("api.legacyScopes")}</span>
                    )}
                  </td>
                  <td>{k.model_ids ? k.model_ids.map((id) => `#${id}`).join(", ") : t("api.allModels")}</td>
                  <td>
                    {formatDate(k.created_at)}
                    <br />
                    <span className="muted small" data-testid="key-maker">
                      {maker(k)}
                    </span>
                  </td>
                  <td>{k.last_used_at ? formatDate(k.last_used_at) : t("api.never")}</td>
                  <td>
                    {!k.expires_at ? (
                      t("api.noExpiry")
                    ) : k.expired ? (
                      <span className="badge status-failed">{t("api.expired", { date: formatDay(k.expires_at) })}</span>
                    ) : (
                      formatDay(k.expires_at)
                    )}
                  </td>
                  <td>
                    {k.rate_limit_per_minute ??
                      (defaultLimit === null ? t("api.serverDefault") : t("api.defaultLimit", { n: defaultLimit }))}
                  </td>
                  <td>
                    {k.revoked_at ? (
                      <span className="badge status-cancelled">{t("api.revokedAt", { date: formatDate(k.revoked_at) })}</span>
                    ) : confirming?.id === k.id ? (
                      <span className="confirm" role="group" aria-label={t("api.confirmLabel", { name: k.name })}>
                        {k.made_by_you
                          ? t("api.confirm", { name: k.name })
                          : t("api.confirmOther", { name: k.name, who: k.created_by ?? t("api.aFormerMember") })}{" "}
                        <button type="button" className="danger" onClick={() => revoke(k)}>
                          {t("api.yesRevoke")}
                        </button>{" "}
                        <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                          {t("api.keep")}
                        </button>
                      </span>
                    ) : (
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => setConfirming(k)}
                        aria-label={t("api.revokeLabel", { name: k.name })}
                      >
                        {t("api.revoke")}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
