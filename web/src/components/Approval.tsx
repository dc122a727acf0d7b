import { useCallback, useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { ApprovalState } from "../api/types";
import { ErrorBox } from "./ui";

// The server's limit for the intended use approved (src/http/routes/approval.ts), as for the team's own.
const INTENDED_USE_MAX = 2000;

/**
 * A second pair of eyes (issue 50 item 4; docs/teams.md): the current version's approval (who, when, for what), and
 * for a reviewer or owner who did not build it, the form that approves it. `version` changes when a new version is
 * published (an operating point), which starts unapproved: the state is read again.
 */
export function ApprovalPanel({ experimentId, version }: { experimentId: number; version: number | undefined }) {
  const { t } = useTranslation("result");
  const [state, setState] = useState<ApprovalState | null>(null);
  const [use, setUse] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    try {
      setState(await call("get", "/v1/experiments/{experiment_id}/approval", { path: { experiment_id: experimentId } }));
    } catch (err) {
      setError(err);
    }
  }, [experimentId]);
  useEffect(() => void load(), [load, version]);

  if (!state) return error ? <ErrorBox error={error} /> : null;
  // Nothing to say where the workspace asks for no approval and none was given.
  if (!state.required && !state.approved) return null;

  const approve = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call("post", "/v1/experiments/{experiment_id}/approval", {
        path: { experiment_id: experimentId },
        body: { intended_use: use.trim() },
      });
      setUse("");
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const who = state.approved_by ?? t("approval.formerMember");
  // ISO 8601 on the wire: the date part, as the model card writes it.
  const date = typeof state.approved_at === "string" ? state.approved_at.slice(0, 10) : "";
  return (
    <section className="card" aria-label={t("approval.title")} data-testid="approval">
      <h2>{t("approval.title")}</h2>
      {state.approved ? (
        <p data-testid="approval-state">
          <span className="badge status-ready">{t("approval.approvedBadge")}</span>{" "}
          {t("approval.approved", { who, date, version: state.version })} <q className="approved-use">{state.intended_use}</q>
        </p>
      ) : (
        <>
          <p data-testid="approval-state">
            <span className="badge status-ready-warned">{t("approval.notApprovedBadge")}</span>{" "}
            {t("approval.notApproved", { version: state.version })}
          </p>
          {state.built_by_you ? <p className="muted small">{t("approval.builtByYou")}</p> : null}
        </>
      )}
      {state.can_approve ? (
        <form onSubmit={approve} aria-label={t("approval.formTitle")} data-testid="approval-form">
          <label>
            {t("approval.useLabel")} <span className="muted small">{t("approval.useHelp")}</span>
            <textarea
              value={use}
              maxLength={INTENDED_USE_MAX}
              rows={3}
              onChange={(e) => setUse(e.target.value)}
              placeholder={t("approval.usePlaceholder")}
              required
            />
          </label>
          <div className="actions">
            <button type="submit" disabled={busy || !use.trim()}>
              {busy ? t("approval.approving") : t("approval.approve", { version: state.version })}
            </button>
          </div>
        </form>
      ) : null}
      <ErrorBox error={error} />
    </section>
  );
}
