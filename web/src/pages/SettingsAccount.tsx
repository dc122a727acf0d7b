import { useState, type FormEvent } from "react";
import { api } from "../api/client";
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
        <label>
          New password (at least 12 characters)
          <input type="password" autoComplete="new-password" required minLength={12} value={next} onChange={(e) => setNext(e.target.value)} />
        </label>
        <label>
          New password again
          <input type="password" autoComplete="new-password" required minLength={12} value={again} onChange={(e) => setAgain(e.target.value)} />
        </label>
        <ErrorBox error={error} />
        {done ? (
          <p className="ok" role="status">
            Password changed. Your other sessions were signed out.
          </p>
        ) : null}
        <button type="submit">Change password</button>
      </form>
    </section>
  );
}
