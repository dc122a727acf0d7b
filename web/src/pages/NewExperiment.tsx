import { useEffect, useMemo, useState } from "react";
import { useForm, type Resolver } from "react-hook-form";
import { useTranslation } from "react-i18next";
import i18n from "i18next";
import { call } from "../api/typed";
import type { Columns, DatasetReport, ExperimentRequest, UploadResult } from "../api/types";
import { ColumnChecklist, ColumnSelect } from "../components/ColumnPickers";
import { DatasetReportView } from "../components/DatasetReportView";
import { DatasetStarters } from "../components/DatasetStarters";
import { PacsImport } from "../components/PacsImport";
import { Uploader } from "../components/Uploader";
import { LabelInputs } from "../components/ExperimentLabels";
import { ErrorBox, Link } from "../components/ui";
import { NotAllowedNote, usePermission } from "../workspace";
import { proposeColumns } from "../lib/columns";
import {
  binaryChoice,
  checkRequest,
  checkValidateBody,
  EMPTY_FORM,
  pickerColumns,
  toFieldErrors,
  toRequest,
  toValidateBody,
  withHidden,
  type ExperimentFormValues,
  type FormContext,
  type FormProblem,
} from "../lib/experiment-form";
import { formatBytes, formatCount, proposeExperimentId } from "../lib/format";
import { navigate } from "../lib/router";
import { useSession } from "../session";

const say = (key: string, values: Record<string, string>) => i18n.t(key, { ns: "experiments", ...values });

/** react-hook-form's check: the request the values stand for, by the server's own schema (lib/experiment-form.ts). */
const requestResolver: Resolver<ExperimentFormValues, FormContext> = async (values, context) => {
  const problems = checkRequest(toRequest(values, context!));
  return problems.length ? { values: {}, errors: toFieldErrors(problems, say) } : { values, errors: {} };
};

/**
 * Upload a zip, read its dataset report, choose columns and settings, build. Every field of the seed's request
 * is here; experiment_id is proposed. With ?source=<id> it is a Retrospective study of that model on new data.
 * The form's state is react-hook-form's; what it sends is checked first with the server's schema.
 */
export function NewExperimentPage({ query }: { query: URLSearchParams }) {
  const { t } = useTranslation("experiments");
  // A viewer or reviewer may not build (experiment.build): the page says so instead of a form whose Build is a 403.
  const canBuild = usePermission("experiment.build");
  if (canBuild.allowed) return <NewExperimentForm query={query} />;
  if (!canBuild.why) return <p aria-busy="true">{t("common:loading")}</p>;
  return (
    <section>
      <h1>{t("new.title")}</h1>
      <NotAllowedNote allowance={canBuild} className="card" />
      <p>
        <Link to="/experiments">{t("new.backToList")}</Link>
      </p>
    </section>
  );
}

function NewExperimentForm({ query }: { query: URLSearchParams }) {
  const { t } = useTranslation("experiments");
  const { session } = useSession();
  const source = query.get("source") ? Number(query.get("source")) : null;
  const [upload, setUpload] = useState<UploadResult | null>(null);
  const [columns, setColumns] = useState<Columns | null>(null);
  /** The dataset check's report, with the body it checked: a report on other columns is not shown (nor blocks Build). */
  const [checked, setChecked] = useState<{ body: string; report: DatasetReport } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [checking, setChecking] = useState(false);
  const [licence, setLicence] = useState<string | null>(null);
  // A sample loaded after an upload replaces it: the uploader is made anew so its bar and file name go too.
  const [uploaderKey, setUploaderKey] = useState(0);

  const cols = useMemo(() => columns?.columns ?? [], [columns]);
  const context: FormContext = { zip_gcloud: upload?.zip_gcloud ?? null, columns: cols, user_id: session.user_id, source };
  const form = useForm<ExperimentFormValues, FormContext>({ defaultValues: EMPTY_FORM, resolver: requestResolver, context });
  const { register, setValue, getValues, watch, handleSubmit, formState, clearErrors } = form;
  const v = watch();
  /** Sets a value a picker holds; once a send was refused, the check runs again at each change. */
  const set = <K extends keyof ExperimentFormValues>(name: K, value: ExperimentFormValues[K]) =>
    setValue(name, value as never, { shouldValidate: formState.isSubmitted, shouldDirty: true });

  useEffect(() => {
    call("get", "/v1/experiments", { query: { limit: 200 } }).then((l) => {
      if (!getValues("experiment_id")) setValue("experiment_id", String(proposeExperimentId(l.data.map((e) => e.experiment_id))));
    }, setError);
  }, [getValues, setValue]);

  // A Retrospective study takes its settings from the source experiment; only the data is new.
  useEffect(() => {
    if (!source) return;
    call("get", "/v1/experiments/{experiment_id}", { path: { experiment_id: source } }).then((e) => {
      // The stored request is described as an open object in the OpenAPI document; it is the body this form sends.
      const r = e.request as Partial<ExperimentRequest>;
      if (r.task) setValue("task", r.task);
      if (r.type_of_experiment) setValue("type_of_experiment", r.type_of_experiment);
      if (r.model_type !== undefined) setValue("model_type", r.model_type === 1 ? "1" : "0");
      if (r.optimization_metric) setValue("optimization_metric", r.optimization_metric);
      if (r.label_cols) setValue("label_cols", r.label_cols);
      setValue("images_col", r.images_col ?? null);
      setValue("data_cols", r.data_cols ?? []);
    }, setError);
  }, [source, setValue]);

  const onUploaded = async (r: UploadResult) => {
    setUpload(r);
    setChecked(null);
    setError(null);
    try {
      const c = await call("get", "/v1/datasets/columns", { query: { zip_gcloud: r.zip_gcloud } });
      setColumns(c);
      if (!source) {
        const p = proposeColumns(c.columns);
        setValue("task", p.task);
        setValue("label_cols", p.label_cols);
        setValue("images_col", p.images_col);
        setValue("data_cols", p.data_cols);
        setValue("split_col", p.split_col);
      }
      clearErrors();
    } catch (err) {
      setError(err);
    }
  };

  const binary = binaryChoice(v, context);
  const validateBody = JSON.stringify(toValidateBody(toRequest(v, context)));
  const report = checked?.body === validateBody ? checked.report : null;
  const pickers = pickerColumns(v, cols);
  const chosenSubgroups = v.subgroup_cols.filter((c) => pickers.subgroups.some((x) => x.name === c));

  /** Refusals shown before anything is sent, as react-hook-form's errors (the same list the Build button fills). */
  const refuse = (problems: FormProblem[]) => {
    const errors = toFieldErrors(problems, say);
    for (const [field, e] of Object.entries(errors))
      form.setError(field as keyof ExperimentFormValues, e as { type: string; message: string });
  };

  const check = async () => {
    clearErrors();
    const body = toValidateBody(toRequest(getValues(), context));
    const problems = checkValidateBody(body);
    if (problems.length) return refuse(problems);
    setChecking(true);
    setError(null);
    try {
      setChecked({ body: JSON.stringify(body), report: await call("post", "/v1/datasets/validate", { body }) });
    } catch (err) {
      setError(err);
    } finally {
      setChecking(false);
    }
  };

  const submit = handleSubmit(async (values) => {
    setError(null);
    try {
      const created = await call("post", "/v1/experiments", { body: toRequest(values, context) });
      navigate(`/experiments/${created.experiment_id}`);
    } catch (err) {
      setError(err);
    }
  });
  const problems = Object.entries(formState.errors).filter(([, e]) => e?.message);

  return (
    <section>
      <h1>{source ? t("new.titleStudy", { id: source }) : t("new.title")}</h1>
      {source ? <p>{t("new.studyIntro", { id: source })}</p> : null}
      <h2>{t("new.step1")}</h2>
      <Uploader
        key={uploaderKey}
        onUploaded={onUploaded}
        onStart={() => {
          setLicence(null);
          setUpload(null);
          setColumns(null);
          setChecked(null);
        }}
      />
      {source ? null : (
        <DatasetStarters
          onLoaded={(r, licence) => {
            setLicence(licence);
            setUploaderKey((k) => k + 1);
            void onUploaded(r);
          }}
        />
      )}
      <PacsImport
        userId={session.user_id}
        onImported={(r) => {
          setLicence(null);
          setUploaderKey((k) => k + 1);
          void onUploaded(r);
        }}
      />
      {upload ? (
        <p className="muted small" data-testid="uploaded">
          {t("new.storedAs")} <code>{upload.zip_gcloud}</code> ({formatBytes(upload.size)}, sha256 {upload.sha256.slice(0, 12)}…)
          {licence ? (
            <>
              <br />
              <span data-testid="sample-licence">{t("new.sampleData", { licence })}</span>
            </>
          ) : null}
        </p>
      ) : null}
      <ErrorBox error={error} />
      {columns ? (
        <form onSubmit={submit} aria-label={t("new.formLabel")} noValidate>
          <h2>{t("new.step2")}</h2>
          <p className="muted small">
            {t("new.csvSummary", {
              csv: columns.csv_path ?? "CSV",
              rows: formatCount(columns.rows),
              columns: formatCount(columns.columns.length),
              first: cols[0]?.name,
            })}
          </p>
          <div className="grid2">
            <label>
              {t("new.task")}
              <select {...register("task")} disabled={!!source}>
                <option value="data">{t("new.taskData")}</option>
                <option value="vision">{t("new.taskVision")}</option>
              </select>
            </label>
            <label>
              {t("new.kind")}
              <select {...register("type_of_experiment")} disabled={!!source}>
                <option value="classification">{t("new.kindClassification")}</option>
                <option value="detection">{t("new.kindDetection")}</option>
              </select>
            </label>
            <label>
              {t("new.modelType")}
              <select {...register("model_type")} disabled={!!source}>
                <option value={0}>{t("new.modelClasses")}</option>
                <option value={1}>{t("new.modelRegression")}</option>
              </select>
            </label>
            {v.task === "vision" ? (
              <ColumnSelect
                id="images-col"
                label={t("new.imagesCol")}
                columns={cols.slice(1)}
                value={v.images_col}
                onChange={(c) => set("images_col", c)}
                help={t("new.imagesColHelp")}
              />
            ) : null}
            {!source && v.type_of_experiment !== "detection" ? (
              <ColumnSelect
                id="split-col"
                label={t("new.splitCol")}
                columns={cols.slice(1).filter((c) => c.type === "categorical")}
                value={v.split_col}
                onChange={(c) => set("split_col", c)}
                optional={t("new.splitNone")}
                help={t("new.splitHelp")}
              />
            ) : null}
          </div>
          {binary ? (
            <label htmlFor="positive-class">
              {t("new.positiveClass")}
              <select
                id="positive-class"
                value={binary.positive}
                onChange={(e) => set("positive_choice", e.target.value)}
                aria-describedby="positive-class-help"
                data-testid="positive-class"
              >
                {binary.values.map((v) => (
                  <option key={v} value={v}>
                    {v === binary.proposed
                      ? t("new.positiveOptionProposed", { value: v, rows: formatCount(binary.counts[v]) })
                      : t("new.positiveOption", { value: v, rows: formatCount(binary.counts[v]) })}
                  </option>
                ))}
              </select>
              <span id="positive-class-help" className="muted small">
                {t("new.positiveHelp")}
              </span>
            </label>
          ) : null}
          <ColumnChecklist
            legend={t("new.labelCols")}
            columns={pickers.labels}
            value={v.label_cols.filter((c) => pickers.labels.some((x) => x.name === c))}
            onChange={(c) => set("label_cols", c)}
            testId="label-cols"
          />
          {v.task === "data" ? (
            <ColumnChecklist
              legend={t("new.dataCols")}
              columns={pickers.data}
              value={v.data_cols.filter((c) => pickers.data.some((x) => x.name === c))}
              onChange={(c) => set("data_cols", withHidden(c, v.data_cols, pickers.data, cols))}
              testId="data-cols"
            />
          ) : null}
          {pickers.subgroups.length ? (
            <details className="starters" data-testid="subgroups-picker" open={chosenSubgroups.length > 0}>
              <summary>{t("new.subgroups")}</summary>
              <ColumnChecklist
                legend={t("new.subgroupCols")}
                columns={pickers.subgroups}
                value={chosenSubgroups}
                onChange={(c) => set("subgroup_cols", c)}
                testId="subgroup-cols"
              />
            </details>
          ) : null}

          <h2>{t("new.step3")}</h2>
          <div className="grid2">
            <LabelInputs
              name={v.name}
              description={v.description}
              onName={(x) => set("name", x)}
              onDescription={(x) => set("description", x)}
              optional
            />
            <label>
              {t("new.metric")}
              <select {...register("optimization_metric")}>
                <option value="AUC">AUC</option>
                <option value="F-macro">{t("new.metricF1")}</option>
                <option value="Precision">{t("new.metricPrecision")}</option>
                <option value="Recall">{t("new.metricRecall")}</option>
              </select>
            </label>
            <fieldset>
              <legend>{t("new.qualityOrTime")}</legend>
              <label className="check">
                <input type="radio" value="1" {...register("optimization_type")} /> {t("new.fastest")}
              </label>
              <label className="check">
                <input type="radio" value="0" {...register("optimization_type")} /> {t("new.bestQuality")}
              </label>
            </fieldset>
            <label>
              {t("new.budget")}
              <input
                type="number"
                min={1}
                step="any"
                inputMode="numeric"
                {...register("time_budget_s")}
                placeholder={t("new.budgetDefault")}
                data-testid="budget"
              />
            </label>
            <label>
              {t("new.experimentId")}
              <input type="number" min={1} required {...register("experiment_id")} data-testid="experiment-id" />
              <span className="muted small">{t("new.experimentIdHelp")}</span>
            </label>
          </div>
          <details>
            <summary>{t("new.advanced")}</summary>
            <label>
              {t("new.callbackUrl")}
              <input type="url" {...register("callback_url")} placeholder="https://…" />
            </label>
            <label>
              {t("new.userToken")}
              <input {...register("user_token")} autoComplete="off" />
            </label>
            <p className="muted small">
              {t("new.user")} <code>{session.user_id}</code> {t("new.userFromSession")}
            </p>
          </details>
          <div className="actions">
            <button type="button" className="secondary" onClick={check} disabled={checking}>
              {checking ? t("new.checking") : t("new.check")}
            </button>
            <button type="submit" disabled={formState.isSubmitting || !v.experiment_id || (report !== null && !report.valid)}>
              {formState.isSubmitting ? t("new.starting") : source ? t("new.startTest") : t("new.build")}
            </button>
          </div>
          {problems.length ? (
            <div className="error" role="alert" data-testid="form-problems">
              <strong>{t("new.refused")}</strong>
              <ul>
                {problems.map(([field, e]) => (
                  <li key={field}>{e?.message}</li>
                ))}
              </ul>
            </div>
          ) : null}
          {report ? <DatasetReportView report={report} /> : null}
        </form>
      ) : null}
    </section>
  );
}
