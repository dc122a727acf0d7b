import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { UploadResult } from "../api/types";
import { ErrorBox } from "./ui";

// For a team without its data at hand yet (issue 38 item 4): a template CSV per layout to fill in, and a public
// sample table Builder puts in the user's folder, with its licence, to try a whole build.

interface Sample {
  id: string;
  title: string;
  description: string;
  rows: number;
  licence: string;
}

/** Two or three made-up rows per layout: the column order and kinds of value, nothing that looks like real data. */
export const TEMPLATES: Array<{ file: string; labelKey: string; text: string }> = [
  {
    file: "builder-template-table.csv",
    labelKey: "starters.templateTable",
    text: "patient_id,diagnosis,age,glucose,bmi\nP0001,yes,54,140,31.2\nP0002,no,38,92,24.8\nP0003,no,61,,27.5\n",
  },
  {
    file: "builder-template-images.csv",
    labelKey: "starters.templateImages",
    text: "patient_id,image,label\nP0001,images/P0001_left.png,malignant\nP0001,images/P0001_right.png,malignant\nP0002,images/P0002_left.png,benign\n",
  },
  {
    file: "builder-template-boxes.csv",
    labelKey: "starters.templateBoxes",
    text: "patient_id,image,cell,x1,y1,x2,y2\nP0001,images/P0001.jpg,WBC,120,80,210,170\nP0001,images/P0001.jpg,RBC,300,40,360,98\nP0002,images/P0002.jpg,Platelets,52,310,80,338\n",
  },
];

function download(file: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = file;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function DatasetStarters({ onLoaded }: { onLoaded: (r: UploadResult, licence: string) => void }) {
  const { t } = useTranslation("dataset");
  const [samples, setSamples] = useState<Sample[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    call("get", "/v1/datasets/samples").then((r) => setSamples(r.data), setError);
  }, []);

  const load = async (s: Sample) => {
    setBusy(s.id);
    setError(null);
    try {
      const r = await call("post", "/v1/datasets/samples/{sample_id}", { path: { sample_id: s.id } });
      onLoaded(r, r.licence);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  return (
    <details className="starters" data-testid="dataset-starters">
      <summary>{t("starters.summary")}</summary>
      <p className="small">
        {t("starters.templates")}{" "}
        {TEMPLATES.map((tpl, i) => (
          <span key={tpl.file}>
            {i ? " · " : ""}
            <button type="button" className="link" onClick={() => download(tpl.file, tpl.text)}>
              {t(tpl.labelKey)}
            </button>
          </span>
        ))}
      </p>
      {samples.map((s) => (
        <div key={s.id} className="small">
          <button type="button" className="secondary" disabled={busy !== null} onClick={() => void load(s)}>
            {busy === s.id ? t("starters.loading") : t("starters.tryWith", { title: s.title })}
          </button>{" "}
          <span className="muted">{s.description}</span>
        </div>
      ))}
      <ErrorBox error={error} title={t("starters.failed")} />
    </details>
  );
}
