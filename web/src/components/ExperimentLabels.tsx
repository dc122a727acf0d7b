import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Experiment } from "../api/types";
import { ErrorBox } from "./ui";

// The server's limits (src/experiments/request.ts NAME_MAX and DESCRIPTION_MAX); the inputs stop there so a
// person sees the limit while typing instead of reading it in an error afterwards.
const NAME_MAX = 120;
const DESCRIPTION_MAX = 2000;

/** The Name and Description inputs, as the New experiment page and the experiment page's edit form both show them. */
export function LabelInputs(props: {
  name: string;
  description: string;
  onName: (v: string) => void;
  onDescription: (v: string) => void;
  optional?: boolean;
}) {
  const { t } = useTranslation("experiments");
  const suffix = props.optional ? ` ${t("labels.optional")}` : "";
  return (
    <>
      <label>
        {t("labels.name")}
        {suffix}
        <input
          value={props.name}
          maxLength={NAME_MAX}
          onChange={(e) => props.onName(e.target.value)}
          placeholder={t("labels.namePlaceholder")}
          autoComplete="off"
        />
      </label>
      <label>
        {t("labels.description")}
        {suffix}
        <textarea value={props.description} maxLength={DESCRIPTION_MAX} rows={3} onChange={(e) => props.onDescription(e.target.value)} />
      </label>
    </>
  );
}

/** The experiment's description, and a small inline form for its owner to rename it or change the description. */
export function ExperimentLabelsEditor({
  exp,
  onSaved,
  editable = true,
}: {
  exp: Experiment;
  onSaved: (e: Experiment) => void;
  /** false: the caller's role may not rename (experiment.build): the description only, no Edit button. */
  editable?: boolean;
}) {
  const { t } = useTranslation("experiments");
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const open = () => {
    setName(exp.name ?? "");
    setDescription(exp.description ?? "");
    setError(null);
    setEditing(true);
  };
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    setError(null);
    try {
      // An emptied field clears the label (null), as the API takes it.
      const updated = await call("patch", "/v1/experiments/{experiment_id}", {
        path: { experiment_id: exp.experiment_id },
        body: { name: name.trim() || null, description: description.trim() || null },
      });
      onSaved(updated);
      setEditing(false);
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  if (!editing) {
    return (
      <div data-testid="experiment-labels">
        {exp.description ? <p className="description">{exp.description}</p> : null}
        {editable ? (
          <button type="button" className="link" onClick={open}>
            {exp.name || exp.description ? t("labels.edit") : t("labels.add")}
          </button>
        ) : null}
      </div>
    );
  }
  return (
    <form className="card narrow" onSubmit={save} aria-label={t("labels.formLabel")}>
      <LabelInputs name={name} description={description} onName={setName} onDescription={setDescription} />
      <ErrorBox error={error} />
      <div className="actions">
        <button type="submit" disabled={saving}>
          {saving ? t("labels.saving") : t("labels.save")}
        </button>
        <button type="button" className="secondary" onClick={() => setEditing(false)} disabled={saving}>
          {t("labels.cancel")}
        </button>
      </div>
    </form>
  );
}
