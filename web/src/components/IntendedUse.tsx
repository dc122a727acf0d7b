import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Experiment } from "../api/types";
import { NotAllowedNote, usePermission } from "../workspace";
import { ErrorBox } from "./ui";

// The server's limit (src/experiments/request.ts INTENDED_USE_MAX).
const INTENDED_USE_MAX = 2000;

/**
 * The team's statement of what the model is for: the model card's first item (TRIPOD+AI asks for it), which only
 * the team can write. Saved with PATCH /v1/experiments/{id} { intended_use }; an emptied box clears it.
 */
export function IntendedUseEditor({ exp, onSaved }: { exp: Experiment; onSaved: (e: Experiment) => void }) {
  const { t } = useTranslation("result");
  const [text, setText] = useState(exp.intended_use ?? "");
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const changed = text.trim() !== (exp.intended_use ?? "");
  // Owners, editors and reviewers write it; a viewer reads it.
  const canWrite = usePermission("intended_use.write");

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    setSaved(false);
    setError(null);
    try {
      const updated = await call("patch", "/v1/experiments/{experiment_id}", {
        path: { experiment_id: exp.experiment_id },
        body: { intended_use: text.trim() || null },
      });
      onSaved(updated);
      setText(updated.intended_use ?? "");
      setSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  return (
    <form className="card" onSubmit={save} aria-label={t("use.title")} data-testid="intended-use">
      <label>
        {t("use.title")} <span className="muted small">{t("use.help")}</span>
        <textarea
          value={text}
          maxLength={INTENDED_USE_MAX}
          rows={4}
          readOnly={!canWrite.allowed}
          onChange={(e) => (setText(e.target.value), setSaved(false))}
          // An example in an empty box the reader cannot fill could be read as the team's own words.
          placeholder={canWrite.allowed ? t("use.placeholder") : undefined}
        />
      </label>
      <ErrorBox error={error} />
      <NotAllowedNote allowance={canWrite} />
      {canWrite.allowed ? (
        <div className="actions">
          <button type="submit" disabled={saving || !changed}>
            {saving ? t("labels.saving", { ns: "experiments" }) : t("use.save")}
          </button>
          {saved && !changed ? (
            <span className="muted small" role="status">
              {t("use.saved")}
            </span>
          ) : null}
          <span className="muted small">
            {[...text].length} / {INTENDED_USE_MAX}
          </span>
        </div>
      ) : null}
    </form>
  );
}
