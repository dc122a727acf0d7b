import { useCallback, useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { ResponseOf } from "../api/types";
import { DeleteWorkspaceCard } from "../components/DeleteWorkspaceCard";
import { OneTimeLinkCard } from "../components/OneTimeLinkCard";
import { ErrorBox } from "../components/ui";
import { formatDate } from "../lib/format";
import { useSession } from "../session";
import { useWorkspace } from "../workspace";

type Member = ResponseOf<"get_v1_workspaces_id_members", 200>["data"][number];
type Role = Member["role"];
const ROLES: Role[] = ["owner", "editor", "reviewer", "viewer"];

interface ShownLink {
  email: string;
  role: Role;
  link: string;
  expiresAt: string;
}

/**
 * What to say once the page comes back after a workspace's deletion: the switch to the personal workspace mounts a
 * new page (App keys pages on the workspace), so the notice waits here, read once.
 */
let noticeAfterSwitch: string | null = null;

/**
 * Settings → Members (issue 50 item 5): who works in the current workspace and with which role, each role in one
 * sentence; owners add people by e-mail (an address with no account gets an invitation link to pass on), change
 * roles and remove members; anyone may leave a shared workspace; anyone may start a new one.
 */
export function MembersPage({ query }: { query: URLSearchParams }) {
  const { t } = useTranslation("settings");
  const { session } = useSession();
  const { current, list, refresh, switchTo } = useWorkspace();
  const [members, setMembers] = useState<Member[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(() => {
    const waiting = noticeAfterSwitch;
    noticeAfterSwitch = null;
    return waiting;
  });
  const [shown, setShown] = useState<ShownLink | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [newName, setNewName] = useState("");
  const [rename, setRename] = useState<string | null>(null);
  const roleName = (r: Role) => t(`common:workspace.roles.${r}`);
  const id = current?.id;
  const owner = current?.role === "owner";

  const load = useCallback(async () => {
    if (!id) return;
    try {
      setMembers((await call("get", "/v1/workspaces/{id}/members", { path: { id } })).data);
    } catch (err) {
      setError(err);
    }
  }, [id]);
  useEffect(() => void load(), [load]);

  /** Runs an action, then reloads the members and the switcher's list; errors go to the page's error box. */
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    setNotice(null);
    try {
      await fn();
      setConfirming(null);
      await Promise.all([load(), refresh()]);
    } catch (err) {
      setError(err);
    }
  };

  const add = (e: FormEvent) => {
    e.preventDefault();
    if (!id) return;
    void act(async () => {
      const r = await call("post", "/v1/workspaces/{id}/members", { path: { id }, body: { email: email.trim(), role } });
      if (r.invitation) {
        const inv = r.invitation;
        setShown({ email: inv.email, role: inv.role, link: inv.url ?? `${location.origin}${inv.path}`, expiresAt: inv.expires_at });
      } else if (r.member) setNotice(t("members.added", { email: r.member.email, role: roleName(r.member.role) }));
      setEmail("");
    });
  };

  const create = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const made = await call("post", "/v1/workspaces", { body: { name: newName } });
      setNewName("");
      await refresh();
      switchTo(made.id);
    });
  };

  if (!current) return <p aria-busy="true">{t("common:loading")}</p>;
  const wsName = current.personal ? t("common:workspace.personal") : current.name;

  return (
    <section>
      <h1>{t("members.title")}</h1>
      <p>{t("members.intro", { name: wsName })}</p>
      <ErrorBox error={error} />
      {notice ? (
        <p className="note" role="status">
          {notice}
        </p>
      ) : null}

      <div className="card">
        <h2>{t("members.rolesTitle")}</h2>
        <dl className="roles" data-testid="roles">
          {ROLES.map((r) => (
            <div key={r}>
              <dt>{roleName(r)}</dt>
              <dd>{t(`members.roleSentence.${r}`)}</dd>
            </div>
          ))}
        </dl>
      </div>

      {owner && !current.personal ? (
        rename === null ? (
          <p>
            <button type="button" className="secondary" onClick={() => setRename(current.name)}>
              {t("members.rename")}
            </button>
          </p>
        ) : (
          <form
            className="card row-form"
            aria-label={t("members.rename")}
            onSubmit={(e) => {
              e.preventDefault();
              void act(async () => {
                await call("patch", "/v1/workspaces/{id}", { path: { id: current.id }, body: { name: rename } });
                setRename(null);
              });
            }}
          >
            <label>
              {t("members.name")}
              <input required maxLength={100} value={rename} onChange={(e) => setRename(e.target.value)} />
            </label>
            <button type="submit">{t("members.save")}</button>
            <button type="button" className="secondary" onClick={() => setRename(null)}>
              {t("users.keep")}
            </button>
          </form>
        )
      ) : null}

      {shown ? (
        <OneTimeLinkCard
          title={t("members.invitationFor", { email: shown.email, role: roleName(shown.role), name: wsName })}
          what={t("members.invitationWhat")}
          link={shown.link}
          expiresAt={shown.expiresAt}
          testId="workspace-invitation"
          linkTestId="workspace-invitation-link"
          onDone={() => setShown(null)}
        />
      ) : null}

      {owner ? (
        <form onSubmit={add} className="card row-form" aria-label={t("members.add")}>
          <h2>{t("members.add")}</h2>
          <label>
            {t("members.email")}
            <input
              type="email"
              required
              maxLength={320}
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              placeholder={t("users.emailPlaceholder")}
            />
          </label>
          <label>
            {t("users.role")}
            <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {roleName(r)}
                </option>
              ))}
            </select>
          </label>
          <button type="submit">{t("members.addButton")}</button>
          <p className="muted small">{t("members.addHelp")}</p>
        </form>
      ) : null}

      <h2>{t("members.listTitle", { name: wsName })}</h2>
      {members === null ? (
        <p aria-busy="true">{t("common:loading")}</p>
      ) : (
        <div className="table-wrap" tabIndex={0}>
          <table className="members" aria-label={t("members.listTitle", { name: wsName })} data-testid="members">
            <thead>
              <tr>
                <th scope="col">{t("auth:signin.email")}</th>
                <th scope="col">{t("users.role")}</th>
                <th scope="col">{t("members.joined")}</th>
                <th scope="col">{t("users.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => {
                const me = m.user_id === session.user_id;
                return (
                  <tr key={m.user_id}>
                    <td className="experiment-name">
                      {m.email} {me ? <span className="muted">{t("users.you")}</span> : null}
                    </td>
                    <td>
                      {owner ? (
                        <select
                          aria-label={t("members.roleOf", { email: m.email })}
                          value={m.role}
                          onChange={(e) =>
                            void act(() =>
                              call("patch", "/v1/workspaces/{id}/members/{user_id}", {
                                path: { id: current.id, user_id: m.user_id },
                                body: { role: e.target.value as Role },
                              }),
                            )
                          }
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {roleName(r)}
                            </option>
                          ))}
                        </select>
                      ) : (
                        roleName(m.role)
                      )}
                    </td>
                    <td>{formatDate(m.joined_at)}</td>
                    <td>
                      {confirming === m.user_id ? (
                        <div className="actions" role="group" aria-label={t("members.confirmLabel", { email: m.email })}>
                          <span>{me ? t("members.confirmLeave", { name: wsName }) : t("members.confirmRemove", { email: m.email })}</span>
                          <button
                            type="button"
                            className="danger"
                            onClick={() =>
                              void act(async () => {
                                if (me) {
                                  await call("post", "/v1/workspaces/{id}/leave", { path: { id: current.id } });
                                  await refresh();
                                } else {
                                  const r = await call("delete", "/v1/workspaces/{id}/members/{user_id}", {
                                    path: { id: current.id, user_id: m.user_id },
                                  });
                                  setNotice(t("members.removed", { email: m.email, count: r.api_keys_revoked }));
                                }
                              })
                            }
                          >
                            {me ? t("members.yesLeave") : t("members.yesRemove")}
                          </button>
                          <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                            {t("users.keep")}
                          </button>
                        </div>
                      ) : me ? (
                        // The only owner cannot leave (the server says so too): the button would only earn a refusal.
                        current.personal || (m.role === "owner" && members.filter((x) => x.role === "owner").length < 2) ? null : (
                          <button type="button" className="secondary" onClick={() => setConfirming(m.user_id)}>
                            {t("members.leave")}
                          </button>
                        )
                      ) : owner ? (
                        <button type="button" className="secondary" onClick={() => setConfirming(m.user_id)}>
                          {t("members.remove")}
                        </button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      <form onSubmit={create} className="card row-form" aria-label={t("members.newTitle")} data-new={query.get("new") ?? undefined}>
        <h2>{t("members.newTitle")}</h2>
        <label>
          {t("members.name")}
          <input
            required
            maxLength={100}
            value={newName}
            autoFocus={query.get("new") === "1"}
            onChange={(e) => setNewName(e.target.value)}
            placeholder={t("members.namePlaceholder")}
          />
        </label>
        <button type="submit">{t("members.create")}</button>
        <p className="muted small">{t("members.newHelp")}</p>
      </form>
      {owner && !current.personal ? (
        <DeleteWorkspaceCard
          workspace={current}
          onDeleted={(count) => {
            noticeAfterSwitch = t("members.deleted", { name: current.name, count });
            const personal = list?.find((w) => w.personal);
            if (personal) switchTo(personal.id);
            void refresh();
          }}
        />
      ) : null}
    </section>
  );
}
