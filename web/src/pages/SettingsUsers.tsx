import { useCallback, useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Invitation, ManagedUser } from "../api/types";
import { OneTimeLinkCard } from "../components/OneTimeLinkCard";
import { ErrorBox } from "../components/ui";
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
  const { t } = useTranslation("settings");
  const { session } = useSession();
  const roleName = (role: string) => (role === "admin" ? t("users.admin") : t("users.member"));
  const [users, setUsers] = useState<ManagedUser[] | null>(null);
  const [invitations, setInvitations] = useState<Invitation[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [shown, setShown] = useState<ShownLink | null>(null);
  const [confirming, setConfirming] = useState<ManagedUser | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"member" | "admin">("member");

  const load = useCallback(async () => {
    try {
      const [u, i] = await Promise.all([call("get", "/v1/admin/users"), call("get", "/v1/admin/invitations")]);
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
      const made = await call("post", "/v1/admin/invitations", { body: { email: email.trim() || null, role } });
      setShown({
        title: made.email
          ? t("users.invitationFor", { email: made.email, role: roleName(made.role).toLowerCase() })
          : t("users.invitation", { role: roleName(made.role).toLowerCase() }),
        link: fullLink(made),
        expiresAt: made.expires_at,
        what: t("users.invitationWhat"),
      });
      setEmail("");
      setRole("member");
    });
  };

  const resetLink = (u: ManagedUser) =>
    act(async () => {
      const made = await call("post", "/v1/admin/users/{id}/password-reset", { path: { id: u.id } });
      setShown({
        title: t("users.resetFor", { email: u.email }),
        link: fullLink(made),
        expiresAt: made.expires_at,
        what: t("users.resetWhat"),
      });
    });

  return (
    <section>
      <h1>{t("users.title")}</h1>
      <p>{t("users.intro")}</p>
      <ErrorBox error={error} />
      {shown ? (
        <OneTimeLinkCard
          title={shown.title}
          what={shown.what}
          link={shown.link}
          expiresAt={shown.expiresAt}
          testId="one-time-link"
          linkTestId="one-time-link-value"
          onDone={() => setShown(null)}
        />
      ) : null}

      <form onSubmit={invite} className="card row-form" aria-label={t("users.invite")}>
        <h2>{t("users.invite")}</h2>
        <label>
          {t("users.theirEmail")}
          <input
            type="email"
            maxLength={320}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder={t("users.emailPlaceholder")}
          />
        </label>
        <label>
          {t("users.role")}
          <select value={role} onChange={(e) => setRole(e.target.value as "member" | "admin")}>
            <option value="member">{t("users.member")}</option>
            <option value="admin">{t("users.adminManages")}</option>
          </select>
        </label>
        <button type="submit">{t("users.createInvitation")}</button>
      </form>

      <h2>{t("users.accounts")}</h2>
      {users === null ? (
        <p aria-busy="true">{t("common:loading")}</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label={t("users.accounts")} data-testid="users">
            <thead>
              <tr>
                <th scope="col">{t("auth:signin.email")}</th>
                <th scope="col">{t("users.role")}</th>
                <th scope="col">{t("api.status")}</th>
                <th scope="col">{t("api.created")}</th>
                <th scope="col">{t("users.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {users.map((u) => {
                const self = u.id === session.user_id;
                return (
                  <tr key={u.id} className={u.status === "active" ? undefined : "revoked"} data-testid={`user-${u.email}`}>
                    <td>
                      {u.email}
                      {self ? <span className="muted small"> {t("users.you")}</span> : null}
                    </td>
                    <td>{roleName(u.role)}</td>
                    <td>
                      <span className={`badge ${u.status === "active" ? "status-ready" : "status-cancelled"}`}>
                        {t(`users.status.${u.status}`, { defaultValue: u.status })}
                      </span>
                    </td>
                    <td>{formatDate(u.created_at)}</td>
                    <td>
                      {u.status === "erasing" ? null : confirming?.id === u.id ? (
                        <span className="confirm" role="group" aria-label={t("users.confirmDisableLabel", { email: u.email })}>
                          {t("users.confirmDisable", { email: u.email })}{" "}
                          <button
                            type="button"
                            className="danger"
                            onClick={() => act(() => call("post", "/v1/admin/users/{id}/disable", { path: { id: u.id } }))}
                          >
                            {t("users.yesDisable")}
                          </button>{" "}
                          <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                            {t("users.keep")}
                          </button>
                        </span>
                      ) : (
                        <span className="row-actions">
                          <button
                            type="button"
                            className="secondary"
                            onClick={() => resetLink(u)}
                            aria-label={t("users.resetLabel", { email: u.email })}
                          >
                            {t("users.reset")}
                          </button>
                          {u.status === "disabled" ? (
                            <button
                              type="button"
                              className="secondary"
                              onClick={() => act(() => call("post", "/v1/admin/users/{id}/enable", { path: { id: u.id } }))}
                              aria-label={t("users.enableLabel", { email: u.email })}
                            >
                              {t("users.enable")}
                            </button>
                          ) : self ? null : (
                            <button
                              type="button"
                              className="secondary"
                              onClick={() => setConfirming(u)}
                              aria-label={t("users.disableLabel", { email: u.email })}
                            >
                              {t("users.disable")}
                            </button>
                          )}
                          {/* One's own role is changed by another administrator: no locking oneself out by a click. */}
                          {self ? null : (
                            <button
                              type="button"
                              className="secondary"
                              onClick={() =>
                                act(() =>
                                  call("put", "/v1/admin/users/{id}/role", {
                                    path: { id: u.id },
                                    body: { role: u.role === "admin" ? "member" : "admin" },
                                  }),
                                )
                              }
                              aria-label={`${u.role === "admin" ? t("users.makeMember") : t("users.makeAdmin")}: ${u.email}`}
                            >
                              {u.role === "admin" ? t("users.makeMember") : t("users.makeAdmin")}
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

      <h2>{t("users.pending")}</h2>
      {invitations === null ? (
        <p aria-busy="true">{t("common:loading")}</p>
      ) : invitations.length === 0 ? (
        <p className="muted">{t("users.noPending")}</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label={t("users.pending")} data-testid="invitations">
            <thead>
              <tr>
                <th scope="col">{t("users.for")}</th>
                <th scope="col">{t("users.role")}</th>
                <th scope="col">{t("api.created")}</th>
                <th scope="col">{t("users.until")}</th>
                <th scope="col">{t("users.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((i) => (
                <tr key={i.id}>
                  <td>{i.email ?? <span className="muted">{t("users.noEmail")}</span>}</td>
                  <td>{roleName(i.role)}</td>
                  <td>{formatDate(i.created_at)}</td>
                  <td>{formatDate(i.expires_at)}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => act(() => call("delete", "/v1/admin/invitations/{id}", { path: { id: i.id } }))}
                      aria-label={i.email ? t("users.withdrawFor", { email: i.email }) : t("users.withdrawLabel")}
                    >
                      {t("users.withdraw")}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="muted small">{t("users.footer")}</p>
    </section>
  );
}
