import { useCallback, useEffect, useState, type FormEvent } from "react";
import { api } from "../api/client";
import type { ApiKey, NewApiKey } from "../api/types";
import { CopyButton, ErrorBox } from "../components/ui";
import { formatDate } from "../lib/format";

/** Settings → API: the seed's path for keys. List, generate (shown once), revoke (with a confirmation). */
export function ApiKeysPage() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [defaultLimit, setDefaultLimit] = useState<number | null>(null);
  const [showRevoked, setShowRevoked] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<NewApiKey | null>(null);
  const [name, setName] = useState("");
  const [limit, setLimit] = useState("");
  const [confirming, setConfirming] = useState<ApiKey | null>(null);

  const load = useCallback(
    () =>
      api<{ data: ApiKey[]; default_rate_limit_per_minute: number }>("GET", "/v1/api-keys").then((r) => {
        setKeys(r.data);
        setDefaultLimit(r.default_rate_limit_per_minute);
      }, setError),
    [],
  );
  // Revoked keys stay listed by the API (they explain a program's sudden 403); the page hides them unless asked.
  const revokedCount = keys?.filter((k) => k.revoked_at).length ?? 0;
  const shown = keys?.filter((k) => showRevoked || !k.revoked_at) ?? null;
  useEffect(() => void load(), [load]);

  const generate = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const body: { name: string; rate_limit_per_minute?: number } = { name: name.trim() };
      if (limit.trim()) body.rate_limit_per_minute = Number(limit);
      setCreated(await api<NewApiKey>("POST", "/v1/api-keys", body));
      setName("");
      setLimit("");
      await load();
    } catch (err) {
      setError(err);
    }
  };

  const revoke = async (k: ApiKey) => {
    setError(null);
    try {
      await api("DELETE", `/v1/api-keys/${encodeURIComponent(k.id)}`);
      setConfirming(null);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>Settings → API</h1>
      <p>
        API keys let your programs call Builder (<code>Authorization: Bearer &lt;key&gt;</code>). Each key is shown once, when it is made.
      </p>
      <ErrorBox error={error} />
      {created ? (
        <div className="note key-once" role="status" data-testid="new-key">
          <h2>Your new key “{created.name}”</h2>
          <p>
            <strong>Copy it now: it is shown only once.</strong> Builder keeps only a hash of it.
          </p>
          <div className="key-row">
            <code className="secret" data-testid="new-key-value">
              {created.key}
            </code>
            <CopyButton text={created.key} label="Copy key" />
          </div>
          <ul>
            <li>Keep it secret: anyone with the key can use your models and data.</li>
            <li>
              Keep it in an environment variable (<code>export BUILDER_API_KEY=…</code>), not in code or notebooks you share.
            </li>
            <li>Rotate it regularly: make a new key, switch your programs to it, then revoke the old one.</li>
            <li>If it may have leaked, revoke it here at once.</li>
          </ul>
          <button type="button" className="secondary" onClick={() => setCreated(null)}>
            I have stored it
          </button>
        </div>
      ) : null}
      <form onSubmit={generate} className="card row-form" aria-label="Generate new key">
        <h2>Generate new key</h2>
        <label>
          Name
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. radiology-notebook" />
        </label>
        <label>
          Requests per minute (optional)
          <input
            type="number"
            min={1}
            max={1000000}
            inputMode="numeric"
            value={limit}
            onChange={(e) => setLimit(e.target.value)}
            placeholder={defaultLimit === null ? "server default" : `server default: ${defaultLimit}`}
          />
        </label>
        <button type="submit">Generate new key</button>
      </form>
      <h2>Your keys</h2>
      {revokedCount > 0 ? (
        <label className="check">
          <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.target.checked)} /> Show revoked keys (
          {revokedCount})
        </label>
      ) : null}
      {keys === null || shown === null ? (
        <p aria-busy="true">Loading…</p>
      ) : keys.length === 0 ? (
        <p>No keys yet.</p>
      ) : shown.length === 0 ? (
        <p>No active keys: every key is revoked. Generate a new one above.</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="API keys" data-testid="keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Limit / min</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <tr key={k.id} className={k.revoked_at ? "revoked" : undefined}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{formatDate(k.created_at)}</td>
                  <td>{k.last_used_at ? formatDate(k.last_used_at) : "never"}</td>
                  <td>{k.rate_limit_per_minute ?? (defaultLimit === null ? "server default" : `${defaultLimit} (server default)`)}</td>
                  <td>
                    {k.revoked_at ? (
                      <span className="badge status-cancelled">revoked {formatDate(k.revoked_at)}</span>
                    ) : confirming?.id === k.id ? (
                      <span className="confirm" role="group" aria-label={`Confirm revoking ${k.name}`}>
                        Revoke “{k.name}”? Programs using it stop working at once.{" "}
                        <button type="button" className="danger" onClick={() => revoke(k)}>
                          Yes, revoke
                        </button>{" "}
                        <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                          Keep it
                        </button>
                      </span>
                    ) : (
                      <button type="button" className="secondary" onClick={() => setConfirming(k)} aria-label={`Revoke ${k.name}`}>
                        Revoke
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
