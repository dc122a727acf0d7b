// Which workspace the dashboard acts in (issue 50): the switcher's choice, kept in this browser, and sent on every
// API request as X-Builder-Workspace (no header: the user's personal workspace, the server's default).

export const WORKSPACE_STORAGE_KEY = "builder.workspace";
export const WORKSPACE_HEADER = "x-builder-workspace";
/**
 * The same choice as a cookie (src/auth/index.ts WORKSPACE_COOKIE): an EventSource and a plain link (a report, a
 * results file) cannot carry a header, so without it they would open the personal workspace's experiment instead.
 */
export const WORKSPACE_COOKIE = "builder_workspace";

function keepCookie(id: string | null): void {
  if (typeof document === "undefined") return;
  const now = document.cookie.split("; ").find((c) => c.startsWith(`${WORKSPACE_COOKIE}=`));
  const want = id ? `${WORKSPACE_COOKIE}=${encodeURIComponent(id)}` : null;
  if (want === (now ?? null)) return;
  document.cookie = want ? `${want}; path=/; SameSite=Lax` : `${WORKSPACE_COOKIE}=; path=/; SameSite=Lax; max-age=0`;
}

/** The chosen workspace's id, or null for the personal one (or when the browser keeps nothing). */
export function chosenWorkspace(): string | null {
  try {
    return localStorage.getItem(WORKSPACE_STORAGE_KEY);
  } catch {
    return null; // storage blocked (a private window's settings): the personal workspace
  }
}

/** Keeps the choice; null goes back to the personal workspace. */
export function chooseWorkspace(id: string | null): void {
  try {
    if (id) localStorage.setItem(WORKSPACE_STORAGE_KEY, id);
    else localStorage.removeItem(WORKSPACE_STORAGE_KEY);
  } catch {
    // nothing kept: this tab still sends nothing, i.e. the personal workspace
  }
  keepCookie(id);
}

/** The header to add to a request: the chosen workspace's, or none. */
export function workspaceHeader(): Record<string, string> {
  const id = chosenWorkspace();
  keepCookie(id); // a choice kept before the cookie existed, or a cookie the browser dropped
  return id ? { [WORKSPACE_HEADER]: id } : {};
}
