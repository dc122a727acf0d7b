import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Session, Setup } from "../api/types";
import { ErrorBox } from "../components/ui";

/** Sign in; on a fresh install, how to create the first user; sign-up when the operator turned it on. */
export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const { t } = useTranslation("auth");
  const [setup, setSetup] = useState<Setup | null>(null);
  const [mode, setMode] = useState<"signin" | "signup" | "firstrun">(location.pathname === "/signup" ? "signup" : "signin");
  const [setupCode, setSetupCode] = useState("");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    call("get", "/v1/setup").then((s) => {
      setSetup(s);
      // A fresh install; with accounts but no administrator (the last one erased), the sign-in form stays and a
      // note offers the setup form (below): the members can still sign in.
      if (!s.users_exist) setMode("firstrun");
    }, setError);
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      if (mode === "firstrun") {
        await call("post", "/v1/setup", { body: { setup_code: setupCode, email, password } });
        onSignedIn(await call("post", "/v1/session", { body: { email, password } }));
        return;
      }
      if (mode === "signup" && signupOpen) {
        // The server answers sign-up the same way whether the address was free or already had an account (so it
        // does not tell strangers who has one); signing in next is what tells this person which it was.
        await call("post", "/v1/users", { body: { email, password } });
        try {
          onSignedIn(await call("post", "/v1/session", { body: { email, password } }));
        } catch {
          setMode("signin");
          setNotice(t("signin.signupNotice"));
        }
        return;
      }
      onSignedIn(await call("post", "/v1/session", { body: { email, password } }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  // Sign-up opens once the server has an administrator (the server refuses it before: signup_needs_admin).
  const signupOpen = !!setup?.signup_enabled && setup.admin_exists;
  const signup = mode === "signup" && signupOpen;
  const firstRun = mode === "firstrun";
  const creating = signup || firstRun;

  return (
    <section className="signin">
      <h1>{firstRun ? t("signin.titleFirstRun") : signup ? t("signin.titleSignup") : t("signin.title")}</h1>
      {firstRun ? (
        <div className="note" data-testid="first-run">
          <p>{t("signin.firstRunIntro")}</p>
          <ul>
            <li>
              {t("signin.firstRunTerminalBefore")} <code>make start</code> {t("signin.firstRunOr")} <code>./builder serve</code>
              {t("signin.firstRunTerminalAfter")}
            </li>
            <li>
              {t("signin.firstRunDocker")} <code>docker compose logs api</code>.
            </li>
          </ul>
          <p className="muted small">
            {t("signin.firstRunWhy")} <code>./builder users create --email you@hospital.org --password '…'</code>
          </p>
        </div>
      ) : null}
      {setup && !setup.admin_exists && !firstRun ? (
        <p className="note" data-testid="no-admin">
          {t("signin.noAdmin")}{" "}
          <button type="button" className="link" onClick={() => setMode("firstrun")}>
            {t("signin.noAdminAction")}
          </button>
        </p>
      ) : null}
      <form onSubmit={submit} className="card narrow">
        {firstRun ? (
          <label>
            {t("signin.setupCode")}
            <input
              required
              autoComplete="off"
              spellCheck={false}
              placeholder="XXXX-XXXX-XXXX-XXXX"
              value={setupCode}
              onChange={(e) => setSetupCode(e.target.value)}
              aria-describedby="setup-code-help"
            />
            <span id="setup-code-help" className="muted small">
              {t("signin.setupCodeHelp")}
            </span>
          </label>
        ) : null}
        <label>
          {t("signin.email")}
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          {t("signin.password")}
          <input
            type="password"
            autoComplete={creating ? "new-password" : "current-password"}
            required
            minLength={creating ? 12 : undefined}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {notice ? (
          <p className="note" role="status" data-testid="signup-notice">
            {notice}
          </p>
        ) : null}
        <ErrorBox error={error} title={firstRun ? t("signin.notCreated") : signup ? t("signin.signupFailed") : t("signin.failed")} />
        <button type="submit" disabled={busy}>
          {busy ? "…" : firstRun ? t("signin.createFirst") : signup ? t("signin.createAccount") : t("signin.submit")}
        </button>
        {firstRun ? (
          <button type="button" className="link" onClick={() => setMode("signin")}>
            {t("signin.madeOnCommandLine")}
          </button>
        ) : null}
        {!firstRun && signupOpen ? (
          <button type="button" className="link" onClick={() => setMode(signup ? "signin" : "signup")}>
            {signup ? t("signin.haveAccount") : t("signin.createAnAccount")}
          </button>
        ) : null}
      </form>
    </section>
  );
}
