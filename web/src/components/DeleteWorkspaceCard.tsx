import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import { ErrorBox } from "./ui";

/**
 * Settings → Members' danger zone (issue 50 item 6): an owner deletes a shared workspace, after reading what goes and
 * that it cannot be undone, by typing its name (a click alone must not erase a team's work). The server decides
 * who may (workspace.delete); the page shows the card to owners of a shared workspace only.
 */
export function DeleteWorkspaceCard({
  workspace,
  onDeleted,
}: {
  workspace: { id: string; name: string };
  onDeleted: (experiments: number) => void;
}) {
  const { t } = useTranslation("settings");
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // The name as shown in the switcher; surrounding spaces are forgiven, anything else must match.
  const matches = typed.trim() === workspace.name.trim();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!matches) return;
    setBusy(true);
    setError(null);
    try {
      const r = await call("delete", "/v1/workspaces/{id}", { path: { id: workspace.id } });
      onDeleted(r.experiments);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} className="card danger-zone" aria-label={t("members.dangerTitle")} data-testid="danger-zone">
      <h2>{t("members.dangerTitle")}</h2>
      <p>{t("members.dangerWhat", { name: workspace.name })}</p>
      <p>
        <strong>{t("members.dangerUndo")}</strong>
      </p>
      <ErrorBox error={error} />
      <label>
        {t("members.dangerType", { name: workspace.name })}
        <input
          value={typed}
          onChange={(e) => setTyped(e.target.value)}
          autoComplete="off"
          spellCheck={false}
          data-testid="danger-zone-name"
        />
      </label>
      <button type="submit" className="danger" disabled={!matches || busy}>
        {t("members.dangerButton")}
      </button>
    </form>
  );
}
