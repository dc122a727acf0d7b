import { useEffect, useState, type FormEvent } from "react";
import { api } from "../api/client";
import type { Session, Setup, SignUpAccepted } from "../api/types";
import { ErrorBox } from "../components/ui";

/** Sign in; on a fresh install, how to create the first user; sign-up when the operator turned it on. */
export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [setup, setSetup] = useState<Setup | null>(null);
  const [mode, setMode] = useState<"signin" | "signup">(location.pathname === "/signup" ? "signup" : "signin");
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    api<Setup>("GET", "/v1/setup").then(setSetup, setError);
  }, []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      if (mode === "signup" && setup?.signup_enabled) {
        // The server answers sign-up the same way whether the address was free or already had an account (so it
        // does not tell strangers who has one); signing in next is what tells this person which it was.
        await api<SignUpAccepted>("POST", "/v1/users", { email, password });
        try {
          onSignedIn(await api<Session>("POST", "/v1/session", { email, password }));
        } catch {
          setMode("signin");
          setNotice(
            "Your account could not be opened with this address and password. If the address already has an account, sign in with its password; otherwise ask your administrator.",
          );
        }
        return;
      }
      onSignedIn(await api<Session>("POST", "/v1/session", { email, password }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const signup = mode === "signup" && setup?.signup_enabled;

  return (
    <section className="signin">
      <h1>{signup ? "Create your Builder account" : "Sign in to Builder"}</h1>
      {setup && !setup.users_exist ? (
        <div className="note" data-testid="first-run">
          <h2>First run: no user exists yet</h2>
          <p>Create the first user on the server, in the folder where Builder runs:</p>
          <pre>
            <code>./builder users create --email you@hospital.org --password '&lt;at least 12 characters&gt;'</code>
          </pre>
          <p>Then sign in here with that email and password.</p>
          {setup.signup_enabled ? <p>Sign-up is also open on this server: choose “Create an account” below.</p> : null}
        </div>
      ) : null}
      <form onSubmit={submit} className="card narrow">
        <label>
          Email
          <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          Password
          <input
            type="password"
            autoComplete={signup ? "new-password" : "current-password"}
            required
            minLength={signup ? 12 : undefined}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        {notice ? (
          <p className="note" role="status" data-testid="signup-notice">
            {notice}
          </p>
        ) : null}
        <ErrorBox error={error} title={signup ? "Sign-up failed" : "Sign-in failed"} />
        <button type="submit" disabled={busy}>
          {busy ? "…" : signup ? "Create account" : "Sign in"}
        </button>
        {setup?.signup_enabled ? (
          <button type="button" className="link" onClick={() => setMode(signup ? "signin" : "signup")}>
            {signup ? "I have an account: sign in" : "Create an account"}
          </button>
        ) : null}
      </form>
    </section>
  );
}
