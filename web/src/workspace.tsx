import { createContext, useCallback, useContext, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { setWorkspaceGoneHandler } from "./api/client";
import { call } from "./api/typed";
import type { ResponseOf } from "./api/types";
import { navigate } from "./lib/router";
import { chooseWorkspace, chosenWorkspace } from "./lib/workspace";

export type Workspace = ResponseOf<"get_v1_workspaces", 200>["data"][number];
export type Permission = Workspace["permissions"][number];

export interface WorkspaceState {
  /** The user's workspaces; null until loaded. */
  list: Workspace[] | null;
  /** The one the dashboard acts in (the personal one unless another was chosen); null until loaded. */
  current: Workspace | null;
  /** Changes of workspace so far: pages keyed on it load their data again. */
  epoch: number;
  switchTo: (id: string) => void;
  /** Reads the list again (after creating, renaming or leaving one). */
  refresh: () => Promise<void>;
}

export const WorkspaceContext = createContext<WorkspaceState | null>(null);

export function useWorkspace(): WorkspaceState {
  const s = useContext(WorkspaceContext);
  if (!s) throw new Error("useWorkspace outside a signed-in page");
  return s;
}

/** The state behind the switcher: the list, the choice kept in localStorage, and what happens on a switch. */
export function useWorkspaceState(path: string): WorkspaceState {
  const [list, setList] = useState<Workspace[] | null>(null);
  const [chosen, setChosen] = useState<string | null>(chosenWorkspace());
  const [epoch, setEpoch] = useState(0);

  const refresh = useCallback(async () => {
    try {
      const { data } = await call("get", "/v1/workspaces");
      setList(data);
      // A workspace the user no longer belongs to (removed, or left in another tab) falls back to the personal one.
      const kept = chosenWorkspace();
      if (kept && !data.some((w) => w.id === kept && !w.personal)) {
        chooseWorkspace(null);
        setChosen(null);
        setEpoch((e) => e + 1);
      }
    } catch {
      setList((l) => l ?? []);
    }
  }, []);

  useEffect(() => {
    setWorkspaceGoneHandler(() => {
      setChosen(null);
      setEpoch((e) => e + 1);
      void refresh();
    });
    void refresh();
  }, [refresh]);

  // Not bound to `list`: a workspace made a moment ago may not be in this render's list yet.
  const switchTo = (id: string) => {
    const personal = list?.find((x) => x.id === id)?.personal ?? false;
    chooseWorkspace(personal ? null : id);
    setChosen(personal ? null : id);
    setEpoch((e) => e + 1);
    // An experiment's page names an experiment of the workspace left behind: the new one's list is the place to be.
    if (/^\/experiments\/\d+/.test(path)) navigate("/experiments");
  };

  const current = list ? (list.find((w) => w.id === chosen && !w.personal) ?? list.find((w) => w.personal) ?? null) : null;
  return { list, current, epoch, switchTo, refresh };
}

/** The header's switcher: a labelled select of the user's workspaces (with their role), and "new workspace". */
export function WorkspaceSwitcher() {
  const { t } = useTranslation();
  const { list, current, switchTo } = useWorkspace();
  if (!list || !current) return null;
  const label = (w: Workspace) => `${w.personal ? t("workspace.personal") : w.name} · ${t(`workspace.roles.${w.role}`)}`;
  return (
    <label className="workspace-switcher">
      <span className="muted small">{t("workspace.label")}</span>
      <select
        data-testid="workspace-switcher"
        value={current.id}
        onChange={(e) => {
          if (e.target.value === "new") navigate("/settings/members?new=1");
          else switchTo(e.target.value);
        }}
      >
        {list.map((w) => (
          <option key={w.id} value={w.id}>
            {label(w)}
          </option>
        ))}
        <option value="new">{t("workspace.new")}</option>
      </select>
    </label>
  );
}

export interface Allowance {
  allowed: boolean;
  /** Why not, in a sentence naming the role and the action ("Su rol (lector) no permite eliminar experimentos."); null when allowed or not yet known. */
  why: string | null;
}

/**
 * Whether the caller's role in the current workspace allows `permission`, as the server's table says
 * (GET /v1/workspaces carries it: the dashboard keeps no copy). Until the list is loaded nothing is allowed, so a
 * viewer never sees a Delete button flash; the server's check stays the real guard either way.
 */
export function usePermission(permission: Permission): Allowance {
  const { t } = useTranslation();
  const current = useContext(WorkspaceContext)?.current;
  if (!current) return { allowed: false, why: null };
  if (current.permissions.includes(permission)) return { allowed: true, why: null };
  return {
    allowed: false,
    why: t("workspace.notAllowed", {
      role: t(`errors:workspace.role_name.${current.role}`),
      action: t(`errors:workspace.action.${permission.replace(".", "_")}`),
    }),
  };
}

/** The sentence that stands where a control the role does not allow would be. */
export function NotAllowedNote({ allowance, className }: { allowance: Allowance; className?: string }) {
  if (allowance.allowed || !allowance.why) return null;
  return (
    <p className={`muted small not-allowed ${className ?? ""}`.trim()} data-testid="not-allowed">
      {allowance.why}
    </p>
  );
}
