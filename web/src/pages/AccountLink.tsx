import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { InvitationCheck, ResetCheck, Session } from "../api/types";
import { NewPasswordFields } from "../components/NewPasswordFields";
import { ErrorBox } from "../components/ui";
import { formatDate } from "../lib/format";

// The pages an administrator's one-time links open: /invite#<token> (create an account) and
// /reset-password#<token> (set a new password). The token is after the #: browsers never send that part to a
// server, so it is in no access log; the page sends it in a request body.

type Kind = "invitation" | "reset";

export function isAccountLinkPath(path: string): Kind | null {
  if (path === "/invite") return "invitation";
  if (path === "/reset-password") return "reset";
  return null;
}

export function AccountLinkPage({ kind, onSignedIn }: { kind: Kind; onSignedIn: (s: Session) => void }) {
  const { t } = useTranslation("auth");
  const token = location.hash.slice(1);
  const [check, setCheck] = useState<InvitationCheck | ResetCheck | null>(null);
  const [refused, setRefused] = useState<unknown>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  // A reset link is made by an administrator (often because the account may be misused): the account's API keys,
  // which a new password alone does not stop, are revoked too unless the person unticks it (issue 48 finding 13).
  const [revokeKeys, setRevokeKeys] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const checked: Promise<InvitationCheck | ResetCheck> =
      kind === "invitation"
        ? call("post", "/v1/invitations/check", { body: { token } })
        : call("post", "/v1/password-resets/check", { body: { token } });
    checked.then((c) => {
      setCheck(c);
      setEmail(c.email ?? "");
    }, setRefused);
  }, [kind, token]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (password !== again) return setError(new Error(t("link.passwordsDiffer")));
    setBusy(true);
    try {
      if (kind === "invitation") {
        await call("post", "/v1/invitations/accept", { body: { token, email, password } });
      } else {
        await call("post", "/v1/password-resets/use", { body: { token, password, revoke_api_keys: revokeKeys } });
      }
      // The link is spent: sign in with what was just set.
      onSignedIn(await call("post", "/v1/session", { body: { email, password } }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const invitation = kind === "invitation";
  const heading = invitation ? t("signin.titleSignup") : t("link.titleReset");
  if (refused || !token) {
    return (
      <section className="signin">
        <h1>{heading}</h1>
        <ErrorBox
          error={refused ?? new Error(t("link.incomplete"))}
          title={invitation ? t("link.invitationUnusable") : t("link.linkUnusable")}
        />
        <p>
          <a href="/signin">{t("link.goToSignIn")}</a>
        </p>
      </section>
    );
  }
  if (!check) return <p aria-busy="true">{t("link.checking")}</p>;
  return (
    <section className="signin">
      <h1>{heading}</h1>
      <p className="note" data-testid="link-state">
        {invitation
          ? (check as InvitationCheck).role === "admin"
            ? t("link.invitedAdmin")
            : t("link.invitedMember")
          : t("link.forAccount", { email: check.email })}{" "}
        {t("link.worksOnce", { date: formatDate(check.expires_at) })}
      </p>
      <form onSubmit={submit} className="card narrow">
        {invitation ? (
          <label>
            {t("link.email")}
            <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
        ) : null}
        <NewPasswordFields
          label={invitation ? t("signin.password") : t("link.newPassword")}
          value={password}
          again={again}
          onValue={setPassword}
          onAgain={setAgain}
        />
        {!invitation ? (
          <div className="note" data-testid="reset-api-keys">
            <p>{t("link.apiKeysStayWorking", { n: (check as ResetCheck).api_keys })}</p>
            {(check as ResetCheck).api_keys > 0 ? (
              <label className="check">
                <input type="checkbox" checked={revokeKeys} onChange={(e) => setRevokeKeys(e.target.checked)} />
                {t("link.revokeApiKeys")}
              </label>
            ) : null}
          </div>
        ) : null}
        <ErrorBox error={error} title={invitation ? t("signin.notCreated") : t("link.notSet")} />
        <button type="submit" disabled={busy}>
          {busy ? "…" : invitation ? t("link.createMine") : t("link.setPassword")}
        </button>
      </form>
    </section>
  );
}
