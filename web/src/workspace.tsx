import { createContext, useCallback, useContext, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { setWorkspaceGoneHandler } from "./api/client";
import { call } from "./api/typed";
import type { ResponseOf } from "./api/types";
import { navigate } from "./lib/router";
import { chooseWorkspace, chosenWorkspace } from "./lib/workspace";

export type Workspace = ResponseOf<"get_v1_workspaces", 200>["data"][number];

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
