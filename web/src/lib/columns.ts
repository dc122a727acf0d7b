import type { ColumnInfo } from "../api/types";

// What the column pickers propose from GET /v1/datasets/columns. Only a proposal: every picker stays editable.
// The CSV's first column is the patient id (Builder's dataset format), so it is never proposed as an input or label.

export interface ColumnChoice {
  task: "vision" | "data";
  label_cols: string[];
  images_col: string | null;
  data_cols: string[];
  split_col: string | null;
}

// Label-like names in the languages of Builder's users (English, Spanish, Portuguese, Catalan, French, Italian,
// German), compared without case or accents: "Diagnóstico" is "diagnostico".
const LABEL_NAME = new RegExp(
  "^(" +
    [
      "label|labels|class|classes|diagnosis|dx|target|outcome|y|finding|findings|category",
      "etiqueta|etiquetas|clase|clases|diagnostico|resultado|desenlace|objetivo|hallazgo|hallazgos|categoria",
      "rotulo|classe|diagnostic|etiquette|resultat|cible|diagnosi|esito|diagnose|befund|klasse|zielvariable",
    ].join("|") +
    ")$",
  "i",
);
const folded = (name: string) =>
  name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .trim();
const SPLIT_NAME = /^(split|ml_use|set|partition|subset|fold_name)$/i;
const SPLIT_VALUES = new Set(["train", "training", "val", "valid", "validation", "test", "testing"]);

export function isSplitColumn(c: ColumnInfo): boolean {
  if (SPLIT_NAME.test(c.name)) return true;
  return c.type === "categorical" && c.examples.length > 0 && c.examples.every((v) => SPLIT_VALUES.has(v.trim().toLowerCase()));
}

/** Columns that can be model inputs: not the patient id, the images, the labels or the split. */
export function inputCandidates(
  columns: ColumnInfo[],
  taken: { label_cols: string[]; images_col: string | null; split_col: string | null },
): ColumnInfo[] {
  const skip = new Set([columns[0]?.name, ...taken.label_cols, taken.images_col, taken.split_col].filter(Boolean));
  return columns.filter((c) => !skip.has(c.name) && c.type !== "image_path" && c.type !== "empty");
}

/** The first guess for every picker, from names, types and examples. */
export function proposeColumns(columns: ColumnInfo[]): ColumnChoice {
  const rest = columns.slice(1);
  const image = rest.find((c) => c.type === "image_path") ?? null;
  const split = rest.find((c) => c !== image && isSplitColumn(c)) ?? null;
  const named = rest.filter((c) => LABEL_NAME.test(folded(c.name)) && c !== split && c !== image);
  const usable = rest.filter((c) => c !== image && c !== split && c.type !== "empty");
  // A name in no list above: the column right after the id (and the image path) when it holds two values, as in the
  // dashboard's own templates (patient_id,diagnosis,age,…), else the last usable column (the layout of docs/datasets.md).
  const second = usable[0]?.value_counts && Object.keys(usable[0].value_counts).length === 2 ? usable[0] : undefined;
  const fallback = second ?? usable[usable.length - 1];
  // One label: a second label-like column is usually the class's name (label 0/1 beside diagnosis "benign"/
  // "malignant"), and ticking both would ask for a multilabel model. Multilabel is one more tick away.
  const label = named[0] ?? fallback;
  const label_cols = label ? [label.name] : [];
  const task = image ? "vision" : "data";
  const choice = { task, label_cols, images_col: image?.name ?? null, split_col: split?.name ?? null } as const;
  const data_cols = task === "data" ? inputCandidates(columns, choice).map((c) => c.name) : [];
  return { ...choice, data_cols };
}

/**
 * A label column with exactly two values: both, in the pipeline's class order (numeric when both are numbers), their
 * row counts, and the proposed positive class: the less frequent one; on a tie the second in that order (the rule
 * of pipelines/builder_pipelines/common/clinical.py, so the form shows what the server would choose).
 */
export function binaryLabelValues(
  c: ColumnInfo | undefined,
): { values: string[]; counts: Record<string, number>; proposed: string } | null {
  const counts = c?.value_counts;
  if (!counts) return null;
  const values = Object.keys(counts).sort();
  if (values.length !== 2) return null;
  if (values.every((v) => v.trim() !== "" && Number.isFinite(Number(v)))) values.sort((a, b) => Number(a) - Number(b));
  const [a, b] = values;
  return { values, counts, proposed: counts[a] < counts[b] ? a : b };
}
