import { useEffect, useState, type FormEvent } from "react";
import { api } from "../api/client";
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
  const token = location.hash.slice(1);
  const [check, setCheck] = useState<InvitationCheck | ResetCheck | null>(null);
  const [refused, setRefused] = useState<unknown>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const path = kind === "invitation" ? "/v1/invitations/check" : "/v1/password-resets/check";
    api<InvitationCheck | ResetCheck>("POST", path, { token }).then((c) => {
      setCheck(c);
      setEmail(c.email ?? "");
    }, setRefused);
  }, [kind, token]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (password !== again) return setError(new Error("the two passwords differ"));
    setBusy(true);
    try {
      if (kind === "invitation") {
        await api("POST", "/v1/invitations/accept", { token, email, password });
      } else {
        await api("POST", "/v1/password-resets/use", { token, password });
      }
      // The link is spent: sign in with what was just set.
      onSignedIn(await api<Session>("POST", "/v1/session", { email, password }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const invitation = kind === "invitation";
  const heading = invitation ? "Create your Builder account" : "Set a new password";
  if (refused || !token) {
    return (
      <section className="signin">
        <h1>{heading}</h1>
        <ErrorBox
          error={refused ?? new Error("this link is incomplete: copy the whole link you were given")}
          title={invitation ? "This invitation cannot be used" : "This link cannot be used"}
        />
        <p>
          <a href="/signin">Go to the sign-in page</a>
        </p>
      </section>
    );
  }
  if (!check) return <p aria-busy="true">Checking the link…</p>;
  return (
    <section className="signin">
      <h1>{heading}</h1>
      <p className="note" data-testid="link-state">
        {invitation
          ? `You have been invited to Builder as ${(check as InvitationCheck).role === "admin" ? "an administrator" : "a member"}. `
          : `For the account ${check.email}. Signing in again is needed everywhere afterwards. `}
        This link works once, until {formatDate(check.expires_at)}.
      </p>
      <form onSubmit={submit} className="card narrow">
        {invitation ? (
          <label>
            Email (your sign-in name)
            <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
        ) : null}
        <NewPasswordFields
          label={invitation ? "Password" : "New password"}
          value={password}
          again={again}
          onValue={setPassword}
          onAgain={setAgain}
        />
        <ErrorBox error={error} title={invitation ? "The account was not created" : "The password was not set"} />
        <button type="submit" disabled={busy}>
          {busy ? "…" : invitation ? "Create my account" : "Set the new password"}
        </button>
      </form>
    </section>
  );
}
