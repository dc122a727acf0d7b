import type { FieldErrors } from "react-hook-form";
import type { z } from "zod";
import { experimentRequestCheck, validateRequestCheck } from "../../../src/experiments/request-rules";
import type { ColumnInfo, ExperimentRequest, ValidateRequest } from "../api/types";
import { binaryLabelValues, inputCandidates } from "./columns";

// The New experiment form's values and the request built from them, checked with the server's own schema
// (src/experiments/request-rules.ts) before anything is sent: a request the server would refuse never leaves.

/** The form's values, as the inputs hold them (numbers typed into inputs stay text until the request is built). */
export interface ExperimentFormValues {
  task: "vision" | "data";
  type_of_experiment: "classification" | "detection";
  model_type: "0" | "1";
  label_cols: string[];
  images_col: string | null;
  data_cols: string[];
  split_col: string | null;
  /** Columns the test figures are reported by (docs/metrics.md, Subgroups); classification with one label only. */
  subgroup_cols: string[];
  /** The user's choice of positive class; null: the proposal (the rarer class). */
  positive_choice: string | null;
  optimization_metric: ExperimentRequest["optimization_metric"];
  optimization_type: "0" | "1";
  time_budget_s: string;
  callback_url: string;
  user_token: string;
  experiment_id: string;
  name: string;
  description: string;
}

export const EMPTY_FORM: ExperimentFormValues = {
  task: "data",
  type_of_experiment: "classification",
  model_type: "0",
  label_cols: [],
  images_col: null,
  data_cols: [],
  split_col: null,
  subgroup_cols: [],
  positive_choice: null,
  optimization_metric: "AUC",
  optimization_type: "1",
  time_budget_s: "",
  callback_url: "",
  user_token: "",
  experiment_id: "",
  name: "",
  description: "",
};

/** What the request needs beyond the form: the upload, its columns, who asks, and the source of a Retrospective study. */
export interface FormContext {
  zip_gcloud: string | null;
  columns: ColumnInfo[];
  user_id: string;
  source: number | null;
}

/** The columns each picker offers, from the other pickers' choices (a column shown in one role is hidden in the others). */
export function pickerColumns(v: ExperimentFormValues, cols: ColumnInfo[]) {
  const rest = cols.slice(1);
  const images = v.task === "vision" ? v.images_col : null;
  const split = v.split_col;
  const labels = rest.filter((c) => c.name !== images && c.name !== split);
  const labelCols = v.label_cols.filter((c) => labels.some((x) => x.name === c));
  const data = inputCandidates(cols, { label_cols: labelCols, images_col: images, split_col: split });
  const subgroups =
    v.type_of_experiment === "classification" && v.model_type === "0" && labelCols.length <= 1
      ? rest.filter((c) => !labelCols.includes(c.name) && c.name !== images && c.name !== split)
      : [];
  return { labels, data, subgroups };
}

/** A binary classification's two label values, the rarer proposed as positive (the server's rule, same tie-break). */
export function binaryChoice(v: ExperimentFormValues, ctx: FormContext) {
  if (ctx.source || v.type_of_experiment !== "classification" || v.model_type !== "0" || v.label_cols.length !== 1) return null;
  const binary = binaryLabelValues(ctx.columns.find((c) => c.name === v.label_cols[0]));
  if (!binary) return null;
  const positive = v.positive_choice && binary.values.includes(v.positive_choice) ? v.positive_choice : binary.proposed;
  return { ...binary, positive };
}

/**
 * A checklist's new choice, keeping the choices it hides for now (a data column while it is the label comes back
 * ticked when it is not), in the CSV's order; names the CSV lacks (a Retrospective study's source's) stay at the end.
 */
export function withHidden(shownChoice: string[], before: string[], offered: ColumnInfo[], cols: ColumnInfo[]): string[] {
  const next = new Set([...shownChoice, ...before.filter((c) => !offered.some((x) => x.name === c))]);
  const names = cols.map((c) => c.name);
  return [...names.filter((n) => next.has(n)), ...[...next].filter((n) => !names.includes(n))];
}

const number = (s: string) => (s.trim() === "" ? undefined : Number(s));

/**
 * The request the form stands for. A choice hidden because its column has since taken another role (a data column
 * ticked as the label, a label chosen as the split) is left out: what is sent is what is shown ticked. Columns the
 * CSV lacks are kept (a Retrospective study names its source's), for the server to report. The schema check below
 * is the second guard.
 */
export function toRequest(v: ExperimentFormValues, ctx: FormContext): ExperimentRequest {
  const images = v.task === "vision" ? v.images_col : null;
  const split = !ctx.source ? v.split_col : null;
  const labels = v.label_cols.filter((c) => c !== images && c !== split);
  const data = v.data_cols.filter((c) => !labels.includes(c) && c !== images && c !== split);
  const offered = pickerColumns(v, ctx.columns).subgroups;
  const subgroups = v.subgroup_cols.filter((c) => offered.some((x) => x.name === c));
  const positive = binaryChoice({ ...v, label_cols: labels }, ctx)?.positive;
  const budget = number(v.time_budget_s);
  return {
    zip_gcloud: ctx.zip_gcloud ?? "",
    experiment_id: number(v.experiment_id) as number,
    user_id: ctx.user_id,
    study_type: ctx.source ? "Retrospective" : "Builder",
    ...(ctx.source ? { source_experiment_id: ctx.source } : {}),
    task: v.task,
    type_of_experiment: v.type_of_experiment,
    model_type: v.model_type === "1" ? 1 : 0,
    label_cols: labels,
    images_col: images,
    data_cols: v.task === "data" ? data : null,
    split_col: split || null,
    ...(subgroups.length ? { subgroup_cols: subgroups } : {}),
    ...(positive ? { positive_class: positive } : {}),
    optimization_metric: v.optimization_metric,
    optimization_type: v.optimization_type === "0" ? 0 : 1,
    ...(budget !== undefined ? { time_budget_s: budget } : {}),
    ...(v.callback_url.trim() ? { callback_url: v.callback_url.trim() } : {}),
    ...(v.user_token ? { user_token: v.user_token } : {}),
    ...(v.name.trim() ? { name: v.name.trim() } : {}),
    ...(v.description.trim() ? { description: v.description.trim() } : {}),
  };
}

/** The body of POST /v1/datasets/validate: the request's dataset fields. */
export function toValidateBody(r: ExperimentRequest): ValidateRequest {
  const { zip_gcloud, task, label_cols, images_col, data_cols, split_col, subgroup_cols, type_of_experiment, model_type } = r;
  return { zip_gcloud, task, label_cols, images_col, data_cols, split_col, subgroup_cols, type_of_experiment, model_type };
}

/** One refusal: the form field it belongs to, the catalog key of its sentence and that sentence's values. */
export interface FormProblem {
  field: keyof ExperimentFormValues | "root";
  key: string;
  values: Record<string, string>;
}

const FORM_FIELDS = new Set<string>(Object.keys(EMPTY_FORM));
/** Fields a person types or ticks, whose own rule has a sentence in the catalogs (new.invalid.<field>). */
const FIELD_SENTENCES = new Set(["label_cols", "experiment_id", "time_budget_s", "callback_url", "name", "description"]);

/** The schema's issues as the form's problems: a cross-field rule by its id, a field's own rule by the field. */
export function problemsOf(issues: z.core.$ZodIssue[]): FormProblem[] {
  return issues.map((i): FormProblem => {
    const path = String(i.path[0] ?? "");
    const field = path === "positive_class" ? "positive_choice" : FORM_FIELDS.has(path) ? (path as keyof ExperimentFormValues) : "root";
    const params = (i as { params?: { rule?: string; column?: string } }).params;
    if (params?.rule) return { field, key: `new.rules.${params.rule}`, values: params.column ? { column: params.column } : {} };
    if (FIELD_SENTENCES.has(path)) return { field, key: `new.invalid.${path}`, values: {} };
    return { field, key: "new.invalidField", values: { field: path || "request", message: i.message } };
  });
}

/** The request's problems by the server's schema; none: it may be sent. */
export function checkRequest(r: ExperimentRequest): FormProblem[] {
  const res = experimentRequestCheck.safeParse(r);
  return res.success ? [] : problemsOf(res.error.issues);
}

/** The validate body's problems by the server's schema. */
export function checkValidateBody(b: ValidateRequest): FormProblem[] {
  const res = validateRequestCheck.safeParse(b);
  return res.success ? [] : problemsOf(res.error.issues);
}

/** Problems as react-hook-form's errors: the first per field, its message already in the page's language. */
export function toFieldErrors(problems: FormProblem[], t: (key: string, values: Record<string, string>) => string) {
  const errors: FieldErrors<ExperimentFormValues> = {};
  for (const p of problems) {
    const target = errors as Record<string, { type: string; message: string } | undefined>;
    target[p.field] ??= { type: "schema", message: t(p.key, p.values) };
  }
  return errors;
}
