import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { setCsrfToken, setUnauthorizedHandler } from "./api/client";
import { call } from "./api/typed";
import type { Session } from "./api/types";
import { ChatDock } from "./components/chat/ChatDock";
import { ErrorBox, Link } from "./components/ui";
import { match, navigate, useLocation } from "./lib/router";
import { chooseWorkspace } from "./lib/workspace";
import { AccountLinkPage, isAccountLinkPath } from "./pages/AccountLink";
import { SignInPage } from "./pages/SignIn";
import { SessionContext } from "./session";
import { useWorkspaceState, WorkspaceContext, WorkspaceSwitcher } from "./workspace";

// Pages load on demand: the first load carries only the shell, sign-in and the lists.
const ExperimentsPage = lazy(() => import("./pages/Experiments").then((m) => ({ default: m.ExperimentsPage })));
const ExperimentPage = lazy(() => import("./pages/Experiment").then((m) => ({ default: m.ExperimentPage })));
const NewExperimentPage = lazy(() => import("./pages/NewExperiment").then((m) => ({ default: m.NewExperimentPage })));
const TryItPage = lazy(() => import("./pages/TryIt").then((m) => ({ default: m.TryItPage })));
const ApiKeysPage = lazy(() => import("./pages/SettingsApi").then((m) => ({ default: m.ApiKeysPage })));
const AccountPage = lazy(() => import("./pages/SettingsAccount").then((m) => ({ default: m.AccountPage })));
const PacsPage = lazy(() => import("./pages/SettingsPacs").then((m) => ({ default: m.PacsPage })));
const ActivityPage = lazy(() => import("./pages/SettingsActivity").then((m) => ({ default: m.ActivityPage })));
const MembersPage = lazy(() => import("./pages/SettingsMembers").then((m) => ({ default: m.MembersPage })));
const UsersPage = lazy(() => import("./pages/SettingsUsers").then((m) => ({ default: m.UsersPage })));
const OperationsPage = lazy(() => import("./pages/Operations").then((m) => ({ default: m.OperationsPage })));

/** Paths and the common namespace's keys of their labels. */
const NAV: Array<[string, string]> = [
  ["/experiments", "nav.experiments"],
  ["/experiments/new", "nav.newExperiment"],
  ["/settings/api", "nav.settingsApi"],
  ["/settings/members", "nav.members"],
  ["/settings/account", "nav.account"],
  ["/settings/pacs", "nav.pacs"],
  ["/settings/activity", "nav.activity"],
];
/** Only administrators see (and may use) Settings → Users and Operations. */
const ADMIN_NAV: Array<[string, string]> = [
  ["/settings/users", "nav.users"],
  ["/operations", "nav.operations"],
];

function Page({ path, query }: { path: string; query: URLSearchParams }) {
  const { t } = useTranslation();
  if (path === "/" || path === "/experiments") return <ExperimentsPage query={query} />;
  if (path === "/experiments/new") return <NewExperimentPage query={query} />;
  let m = match("/experiments/:id/try", path);
  if (m) return <TryItPage id={Number(m.id)} />;
  m = match("/experiments/:id", path);
  if (m) return <ExperimentPage id={Number(m.id)} tab={query.get("tab")} />;
  if (path === "/settings" || path === "/settings/api") return <ApiKeysPage />;
  if (path === "/settings/account") return <AccountPage />;
  if (path === "/settings/pacs") return <PacsPage />;
  if (path === "/settings/activity") return <ActivityPage />;
  if (path === "/settings/members") return <MembersPage query={query} />;
  if (path === "/settings/users") return <UsersPage />;
  if (path === "/operations") return <OperationsPage />;
  return (
    <section>
      <h1>{t("notFound.title")}</h1>
      <p>
        {t("notFound.noPage")} <code>{path}</code>. <Link to="/experiments">{t("notFound.goToExperiments")}</Link>
      </p>
    </section>
  );
}

export function App() {
  const { t, i18n } = useTranslation();
  const { path, query } = useLocation();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    const attempt = async (again: boolean): Promise<void> => {
      try {
        const s = await call("get", "/v1/session");
        setCsrfToken(s.csrf_token);
        setSession(s);
      } catch (err) {
        const { status, code } = err as { status?: number; code?: string };
        // The workspace this browser kept is gone (its owner removed the user, or deleted it): the client has already
        // forgotten the choice, so the session loads again in the personal workspace instead of a dead end.
        if (code === "workspace_not_found" && again) return attempt(false);
        if (status === 401) setSession(null);
        else setError(err);
      }
    };
    await attempt(true);
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setCsrfToken(null);
      setSession(null);
    });
    void load();
  }, [load]);

  useEffect(() => {
    const key = [...NAV, ...ADMIN_NAV].find(([to]) => to === path)?.[1];
    document.title = `${key ? t(key) : "Builder"} · Builder`;
  }, [path, t, i18n.language]);

  useEffect(() => {
    document.getElementById("main")?.focus({ preventScroll: true });
  }, [path]);

  const signOut = async () => {
    await call("delete", "/v1/session").catch(() => undefined);
    // The next person to sign in on this browser starts in their own personal workspace.
    chooseWorkspace(null);
    setCsrfToken(null);
    setSession(null);
    navigate("/signin");
  };

  const signedIn = (s: Session) => {
    setCsrfToken(s.csrf_token);
    setSession(s);
  };
  // An invitation or password-reset link opens its own page, signed in or not (the link decides whose account).
  const linkKind = isAccountLinkPath(path);
  if (linkKind) {
    return (
      <main id="main" tabIndex={-1}>
        <AccountLinkPage
          kind={linkKind}
          onSignedIn={(s) => {
            signedIn(s);
            // Replaced, not pushed: Back must not return to the spent link.
            history.replaceState(null, "", "/experiments");
            window.dispatchEvent(new PopStateEvent("popstate"));
          }}
        />
      </main>
    );
  }
  if (session === undefined) {
    return <main id="main">{error ? <ErrorBox error={error} title={t("unreachable")} /> : <p aria-busy="true">{t("loading")}</p>}</main>;
  }
  if (session === null) {
    return (
      <main id="main" tabIndex={-1}>
        <SignInPage
          onSignedIn={(s) => {
            signedIn(s);
            if (path === "/signin" || path === "/signup") navigate("/experiments");
          }}
        />
      </main>
    );
  }
  const current = path === "/" || path === "/signin" ? "/experiments" : path;
  return (
    <SessionContext.Provider value={{ session, signOut }}>
      <SignedIn path={path} query={query} current={current} session={session} signOut={signOut} />
    </SessionContext.Provider>
  );
}

/** The signed-in shell: header (with the workspace switcher) and the page, which loads again on a switch. */
function SignedIn({
  path,
  query,
  current,
  session,
  signOut,
}: {
  path: string;
  query: URLSearchParams;
  current: string;
  session: Session;
  signOut: () => Promise<void>;
}) {
  const { t } = useTranslation();
  const workspace = useWorkspaceState(path);
  // Keyed on the workspace: a switch remounts the page and the chat, which then load the new workspace's data.
  const key = `workspace-${workspace.epoch}`;
  return (
    <WorkspaceContext.Provider value={workspace}>
      <a className="skip" href="#main">
        {t("skipToContent")}
      </a>
      <header className="top">
        <Link to="/experiments" className="brand">
          Builder
        </Link>
        <nav aria-label={t("nav.label")}>
          {[...NAV, ...(session.role === "admin" ? ADMIN_NAV : [])].map(([to, label]) => (
            <Link key={to} to={to} className={current === to ? "active" : undefined}>
              {t(label)}
            </Link>
          ))}
        </nav>
        <WorkspaceSwitcher />
        <div className="who">
          <ChatDock key={key} />
          <span className="muted small">{session.email}</span>
          <button type="button" className="secondary" onClick={signOut}>
            {t("signOut")}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<p aria-busy="true">{t("loading")}</p>}>
          <Page key={key} path={path === "/signin" ? "/experiments" : path} query={query} />
        </Suspense>
      </main>
    </WorkspaceContext.Provider>
  );
}
