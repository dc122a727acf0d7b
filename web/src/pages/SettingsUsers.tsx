import { useCallback, useEffect, useState, type FormEvent } from "react";
import { api } from "../api/client";
import type { Invitation, ManagedUser, NewInvitation, NewResetLink } from "../api/types";
import { CopyButton, ErrorBox } from "../components/ui";
import { formatDate } from "../lib/format";
import { useSession } from "../session";

/** A one-time link as the administrator passes it on: the server's public address when set, else this page's. */
function fullLink(link: { url: string | null; path: string }): string {
  return link.url ?? `${location.origin}${link.path}`;
}

interface ShownLink {
  title: string;
  link: string;
  expiresAt: string;
  what: string;
}

/** Settings → Users, for administrators: accounts, invitations, disabling, password-reset links and roles. */
export function UsersPage() {
  const { session } = useSession();
  const [users, setUsers] = useState<ManagedUser[] | null>(null);
  const [invitations, setInvitations] = useState<Invitation[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [shown, setShown] = useState<ShownLink | null>(null);
  const [confirming, setConfirming] = useState<ManagedUser | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");

  const load = useCallback(async () => {
    try {
      const [u, i] = await Promise.all([
        api<{ data: ManagedUser[] }>("GET", "/v1/admin/users"),
        api<{ data: Invitation[] }>("GET", "/v1/admin/invitations"),
      ]);
      setUsers(u.data);
      setInvitations(i.data);
    } catch (err) {
      setError(err);
    }
  }, []);
  useEffect(() => void load(), [load]);

  /** Runs an action, then reloads the lists; errors go to the page's error box. */
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      setConfirming(null);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  const invite = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const made = await api<NewInvitation>("POST", "/v1/admin/invitations", { email: email.trim() || null, role });
      setShown({
        title: `Invitation${made.email ? ` for ${made.email}` : ""} (${made.role === "admin" ? "administrator" : "member"})`,
        link: fullLink(made),
        expiresAt: made.expires_at,
        what: "Whoever opens it can create one account with it, once.",
      });
      setEmail("");
      setRole("member");
    });
  };

  const resetLink = (u: ManagedUser) =>
    act(async () => {
      const made = await api<NewResetLink>("POST", `/v1/admin/users/${u.id}/password-reset`);
      setShown({
        title: `Password-reset link for ${u.email}`,
        link: fullLink(made),
        expiresAt: made.expires_at,
        what: "It sets a new password once and signs them out everywhere. Any earlier reset link for them no longer works.",
      });
    });

  return (
    <section>
      <h1>Settings → Users</h1>
      <p>
        Invite people, disable accounts and reset passwords. Builder sends no email: copy each link and give it to the person yourself (a
        message in your hospital's chat or mail works).
      </p>
      <ErrorBox error={error} />
      {shown ? (
        <div className="note key-once" role="status" data-testid="one-time-link">
          <h2>{shown.title}</h2>
          <p>
            <strong>Copy it now: it is shown only once.</strong> {shown.what} It works until <strong>{formatDate(shown.expiresAt)}</strong>.
          </p>
          <div className="key-row">
            <code className="secret" data-testid="one-time-link-value">
              {shown.link}
            </code>
            <CopyButton text={shown.link} label="Copy link" />
          </div>
          <div className="actions">
            <button type="button" className="secondary" onClick={() => setShown(null)}>
              I have passed it on
            </button>
          </div>
        </div>
      ) : null}

      <form onSubmit={invite} className="card row-form" aria-label="Invite someone">
        <h2>Invite someone</h2>
        <label>
          Their email (optional)
          <input
            type="email"
            maxLength={320}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder="e.g. nurse@hospital.org"
          />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as "member" | "admin")}>
            <option value="member">Member</option>
            <option value="admin">Administrator (manages users)</option>
          </select>
        </label>
        <button type="submit">Create invitation link</button>
      </form>

      <h2>Accounts</h2>
      {users === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Accounts" data-testid="users">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => {
                const self = u.id === session.user_id;
                return (
                  <tr key={u.id} className={u.status === "active" ? undefined : "revoked"} data-testid={`user-${u.email}`}>
                    <td>
                      {u.email}
                      {self ? <span className="muted small"> (you)</span> : null}
                    </td>
                    <td>{u.role === "admin" ? "Administrator" : "Member"}</td>
                    <td>
                      <span className={`badge ${u.status === "active" ? "status-ready" : "status-cancelled"}`}>{u.status}</span>
                    </td>
                    <td>{formatDate(u.created_at)}</td>
                    <td>
                      {u.status === "erasing" ? null : confirming?.id === u.id ? (
                        <span className="confirm" role="group" aria-label={`Confirm disabling ${u.email}`}>
                          Disable {u.email}? They are signed out and their API keys stop working at once.{" "}
                          <button
                            type="button"
                            className="danger"
                            onClick={() => act(() => api("POST", `/v1/admin/users/${u.id}/disable`))}
                          >
                            Yes, disable
                          </button>{" "}
                          <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                            Keep it
                          </button>
                        </span>
                      ) : (
                        <span className="row-actions">
                          <button
                            type="button"
                            className="secondary"
                            onClick={() => resetLink(u)}
                            aria-label={`Reset password of ${u.email}`}
                          >
                            Reset password
                          </button>
                          {u.status === "disabled" ? (
                            <button
                              type="button"
                              className="secondary"
                              onClick={() => act(() => api("POST", `/v1/admin/users/${u.id}/enable`))}
                              aria-label={`Enable ${u.email}`}
                            >
                              Enable
                            </button>
                          ) : self ? null : (
                            <button type="button" className="secondary" onClick={() => setConfirming(u)} aria-label={`Disable ${u.email}`}>
                              Disable
                            </button>
                          )}
                          {/* One's own role is changed by another administrator: no locking oneself out by a click. */}
                          {self ? null : (
                            <button
                              type="button"
                              className="secondary"
                              onClick={() =>
                                act(() => api("PUT", `/v1/admin/users/${u.id}/role`, { role: u.role === "admin" ? "member" : "admin" }))
                              }
                              aria-label={`${u.role === "admin" ? "Make member" : "Make administrator"}: ${u.email}`}
                            >
                              {u.role === "admin" ? "Make member" : "Make administrator"}
                            </button>
                          )}
                        </span>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      <h2>Pending invitations</h2>
      {invitations === null ? (
        <p aria-busy="true">Loading…</p>
      ) : invitations.length === 0 ? (
        <p className="muted">None: every invitation was used, withdrawn or has expired.</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Pending invitations" data-testid="invitations">
            <thead>
              <tr>
                <th scope="col">For</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Works until</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id}>
                  <td>{i.email ?? <span className="muted">no email noted</span>}</td>
                  <td>{i.role === "admin" ? "Administrator" : "Member"}</td>
                  <td>{formatDate(i.created_at)}</td>
                  <td>{formatDate(i.expires_at)}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => act(() => api("DELETE", `/v1/admin/invitations/${i.id}`))}
                      aria-label={`Withdraw the invitation${i.email ? ` for ${i.email}` : ""}`}
                    >
                      Withdraw
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="muted small">
        An invitation link works once, for 72 hours; a password-reset link once, for 24 hours. Only a fingerprint of each link is kept, so a
        lost link cannot be shown again: make a new one.
      </p>
    </section>
  );
}
