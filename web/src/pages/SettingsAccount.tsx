import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import { NewPasswordFields } from "../components/NewPasswordFields";
import { ErrorBox } from "../components/ui";
import { currentLanguage, LANGUAGES, setLanguage, type Language } from "../i18n";
import { useSession } from "../session";

export function AccountPage() {
  const { t } = useTranslation("settings");
  const { session } = useSession();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  // Off by default here: it is the owner changing their own password, and their programs' keys should not stop by
  // surprise (an administrator's reset link revokes them by default: AccountLink.tsx).
  const [revokeKeys, setRevokeKeys] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setDone(false);
    if (next !== again) return setError(new Error(t("account.passwordsDiffer")));
    try {
      await call("put", "/v1/account/password", {
        body: { current_password: current, new_password: next, revoke_api_keys: revokeKeys },
      });
      setDone(true);
      setCurrent("");
      setNext("");
      setAgain("");
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>{t("account.title")}</h1>
      <p>
        {t("account.signedInAs")} <strong>{session.email}</strong>.
      </p>
      <LanguageSwitch />
      <form onSubmit={submit} className="card narrow" aria-label={t("account.changePassword")}>
        <h2>{t("account.changePassword")}</h2>
        <label>
          {t("account.currentPassword")}
          <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <NewPasswordFields label={t("account.newPassword")} value={next} again={again} onValue={setNext} onAgain={setAgain} />
        <p className="muted small">{t("account.apiKeysStayWorking")}</p>
        <label className="check">
          <input type="checkbox" checked={revokeKeys} onChange={(e) => setRevokeKeys(e.target.checked)} data-testid="revoke-api-keys" />
          {t("account.revokeApiKeys")}
        </label>
        <ErrorBox error={error} />
        {done ? (
          <p className="ok" role="status">
            {t("account.passwordChanged")}
          </p>
        ) : null}
        <button type="submit">{t("account.changePassword")}</button>
      </form>
      <EraseAccountForm />
    </section>
  );
}

/** The dashboard's language, kept in this browser (the API's messages follow it through Accept-Language). */
function LanguageSwitch() {
  const { t, i18n } = useTranslation();
  return (
    <div className="card narrow">
      <label>
        {t("language.label")}
        <select
          value={currentLanguage(i18n.resolvedLanguage)}
          onChange={(e) => void setLanguage(e.target.value as Language)}
          data-testid="language"
        >
          {LANGUAGES.map((l) => (
            <option key={l.code} value={l.code} lang={l.code}>
              {l.name}
            </option>
          ))}
        </select>
      </label>
      <p className="muted small">{t("language.help")}</p>
    </div>
  );
}

/** DELETE /v1/me: the password again, then a last confirmation; the server signs out and erases in the background. */
function EraseAccountForm() {
  const { t } = useTranslation("settings");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (!window.confirm(t("erase.confirm"))) return;
    try {
      await call("delete", "/v1/me", { body: { password } });
      window.location.assign("/signin");
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form onSubmit={submit} className="card narrow" aria-label={t("erase.title")}>
      <h2>{t("erase.title")}</h2>
      <p className="muted">{t("erase.explain")}</p>
      <label>
        {t("erase.yourPassword")}
        <input
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          data-testid="erase-password"
        />
      </label>
      <ErrorBox error={error} />
      <button type="submit" className="danger">
        {t("erase.submit")}
      </button>
    </form>
  );
}
