import { useState, type FormEvent } from "react";
import { api } from "../api/client";
import { NewPasswordFields } from "../components/NewPasswordFields";
import { ErrorBox } from "../components/ui";
import { useSession } from "../session";

export function AccountPage() {
  const { session } = useSession();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setDone(false);
    if (next !== again) return setError(new Error("the two new passwords differ"));
    try {
      await api("PUT", "/v1/account/password", { current_password: current, new_password: next });
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
      <h1>Settings → Account</h1>
      <p>
        Signed in as <strong>{session.email}</strong>.
      </p>
      <form onSubmit={submit} className="card narrow" aria-label="Change password">
        <h2>Change password</h2>
        <label>
          Current password
          <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <NewPasswordFields label="New password" value={next} again={again} onValue={setNext} onAgain={setAgain} />
        <ErrorBox error={error} />
        {done ? (
          <p className="ok" role="status">
            Password changed. Your other sessions were signed out.
          </p>
        ) : null}
        <button type="submit">Change password</button>
      </form>
      <EraseAccountForm />
    </section>
  );
}

/** DELETE /v1/me: the password again, then a last confirmation; the server signs out and erases in the background. */
function EraseAccountForm() {
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (
      !window.confirm(
        "Erase your account? Every experiment, model, report, dataset, API key and chat of yours is deleted for good. This cannot be undone.",
      )
    )
      return;
    try {
      await api("DELETE", "/v1/me", { password });
      window.location.assign("/signin");
    } catch (err) {
      setError(err);
    }
  };

  return (
    <form onSubmit={submit} className="card narrow" aria-label="Erase account">
      <h2>Erase account</h2>
      <p className="muted">
        Deletes everything of yours, in the database and in storage: experiments, models, reports, uploaded datasets, API keys, sessions,
        chat conversations and logs. Only the audit log keeps a record of what was done, without names.
      </p>
      <label>
        Your password
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
        Erase my account
      </button>
    </form>
  );
}
