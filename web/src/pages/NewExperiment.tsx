import { useEffect, useMemo, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { api } from "../api/client";
import type { Columns, DatasetReport, ExperimentList, ExperimentRequest, UploadResult } from "../api/types";
import { ColumnChecklist, ColumnSelect } from "../components/ColumnPickers";
import { DatasetReportView } from "../components/DatasetReportView";
import { DatasetStarters } from "../components/DatasetStarters";
import { Uploader } from "../components/Uploader";
import { LabelInputs } from "../components/ExperimentLabels";
import { ErrorBox } from "../components/ui";
import { binaryLabelValues, inputCandidates, proposeColumns } from "../lib/columns";
import { formatBytes, formatCount, proposeExperimentId } from "../lib/format";
import { navigate } from "../lib/router";
import { useSession } from "../session";

type Metric = ExperimentRequest["optimization_metric"];

/**
 * Upload a zip, read its dataset report, choose columns and settings, build. Every field of the seed's request
 * is here; experiment_id is proposed. With ?source=<id> it is a Retrospective study of that model on new data.
 */
export function NewExperimentPage({ query }: { query: URLSearchParams }) {
  const { t } = useTranslation("experiments");
  const { session } = useSession();
  const source = query.get("source") ? Number(query.get("source")) : null;
  const [upload, setUpload] = useState<UploadResult | null>(null);
  const [columns, setColumns] = useState<Columns | null>(null);
  const [report, setReport] = useState<DatasetReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [checking, setChecking] = useState(false);
  const [submitting, setSubmitting] = useState(false);

  const [task, setTask] = useState<"vision" | "data">("data");
  const [kind, setKind] = useState<"classification" | "detection">("classification");
  const [modelType, setModelType] = useState<0 | 1>(0);
  const [labelCols, setLabelCols] = useState<string[]>([]);
  const [imagesCol, setImagesCol] = useState<string | null>(null);
  const [dataCols, setDataCols] = useState<string[]>([]);
  const [splitCol, setSplitCol] = useState<string | null>(null);
  /** Columns the test figures are reported by (docs/metrics.md, Subgroups); classification with one label only. */
  const [subgroupCols, setSubgroupCols] = useState<string[]>([]);
  /** The user's choice of positive class; null: the proposal (the rarer class). */
  const [positiveChoice, setPositiveChoice] = useState<string | null>(null);
  const [metric, setMetric] = useState<Metric>("AUC");
  const [optimization, setOptimization] = useState<0 | 1>(1);
  const [budget, setBudget] = useState("");
  const [callbackUrl, setCallbackUrl] = useState("");
  const [userToken, setUserToken] = useState("");
  const [experimentId, setExperimentId] = useState<number | null>(null);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [licence, setLicence] = useState<string | null>(null);
  // A sample loaded after an upload replaces it: the uploader is made anew so its bar and file name go too.
  const [uploaderKey, setUploaderKey] = useState(0);

  useEffect(() => {
    api<ExperimentList>("GET", "/v1/experiments?limit=200").then(
      (l) => setExperimentId((id) => id ?? proposeExperimentId(l.data.map((e) => e.experiment_id))),
      setError,
    );
  }, []);

  // A Retrospective study takes its settings from the source experiment; only the data is new.
  useEffect(() => {
    if (!source) return;
    api<{ request: Partial<ExperimentRequest> }>("GET", `/v1/experiments/${source}`).then((e) => {
      const r = e.request;
      if (r.task) setTask(r.task);
      if (r.type_of_experiment) setKind(r.type_of_experiment);
      if (r.model_type !== undefined) setModelType(r.model_type);
      if (r.optimization_metric) setMetric(r.optimization_metric);
      if (r.label_cols) setLabelCols(r.label_cols);
      setImagesCol(r.images_col ?? null);
      setDataCols(r.data_cols ?? []);
    }, setError);
  }, [source]);

  const onUploaded = async (r: UploadResult) => {
    setUpload(r);
    setReport(null);
    setError(null);
    try {
      const c = await api<Columns>("GET", `/v1/datasets/columns?zip_gcloud=${encodeURIComponent(r.zip_gcloud)}`);
      setColumns(c);
      if (!source) {
        const p = proposeColumns(c.columns);
        setTask(p.task);
        setLabelCols(p.label_cols);
        setImagesCol(p.images_col);
        setDataCols(p.data_cols);
        setSplitCol(p.split_col);
      }
    } catch (err) {
      setError(err);
    }
  };

  const cols = useMemo(() => columns?.columns ?? [], [columns]);
  // A binary classification's two label values, the rarer first proposed as positive (the server's rule, same tie-break).
  const binary =
    !source && kind === "classification" && modelType === 0 && labelCols.length === 1
      ? binaryLabelValues(cols.find((c) => c.name === labelCols[0]))
      : null;
  const positiveClass = binary ? (positiveChoice && binary.values.includes(positiveChoice) ? positiveChoice : binary.proposed) : null;
  const candidates = useMemo(
    () => inputCandidates(cols, { label_cols: labelCols, images_col: imagesCol, split_col: splitCol }),
    [cols, labelCols, imagesCol, splitCol],
  );

  // Any column but the id, labels, image path and split may describe the patients (a feature or not).
  const subgroupCandidates =
    kind === "classification" && modelType === 0 && labelCols.length <= 1
      ? cols.slice(1).filter((c) => !labelCols.includes(c.name) && c.name !== imagesCol && c.name !== splitCol)
      : [];
  const chosenSubgroups = subgroupCols.filter((c) => subgroupCandidates.some((x) => x.name === c));

  const request = (): ExperimentRequest => ({
    zip_gcloud: upload!.zip_gcloud,
    experiment_id: experimentId!,
    user_id: session.user_id,
    study_type: source ? "Retrospective" : "Builder",
    ...(source ? { source_experiment_id: source } : {}),
    task,
    type_of_experiment: kind,
    model_type: modelType,
    label_cols: labelCols,
    images_col: task === "vision" ? imagesCol : null,
    data_cols: task === "data" ? dataCols : null,
    split_col: !source && splitCol ? splitCol : null,
    ...(chosenSubgroups.length ? { subgroup_cols: chosenSubgroups } : {}),
    ...(positiveClass ? { positive_class: positiveClass } : {}),
    optimization_metric: metric,
    optimization_type: optimization,
    ...(budget.trim() ? { time_budget_s: Number(budget) } : {}),
    ...(callbackUrl.trim() ? { callback_url: callbackUrl.trim() } : {}),
    ...(userToken ? { user_token: userToken } : {}),
    ...(name.trim() ? { name: name.trim() } : {}),
    ...(description.trim() ? { description: description.trim() } : {}),
  });

  const check = async () => {
    setChecking(true);
    setError(null);
    try {
      const r = request();
      setReport(
        await api<DatasetReport>("POST", "/v1/datasets/validate", {
          zip_gcloud: r.zip_gcloud,
          task: r.task,
          label_cols: r.label_cols,
          images_col: r.images_col,
          data_cols: r.data_cols,
          split_col: r.split_col,
          subgroup_cols: r.subgroup_cols,
          type_of_experiment: r.type_of_experiment,
          model_type: r.model_type,
        }),
      );
    } catch (err) {
      setError(err);
    } finally {
      setChecking(false);
    }
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSubmitting(true);
    setError(null);
    try {
      const created = await api<{ experiment_id: number }>("POST", "/v1/experiments", request());
      navigate(`/experiments/${created.experiment_id}`);
    } catch (err) {
      setError(err);
      setSubmitting(false);
    }
  };

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
          setReport(null);
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
        <form onSubmit={submit} aria-label={t("new.formLabel")}>
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
              <select value={task} onChange={(e) => setTask(e.target.value as "vision" | "data")} disabled={!!source}>
                <option value="data">{t("new.taskData")}</option>
                <option value="vision">{t("new.taskVision")}</option>
              </select>
            </label>
            <label>
              {t("new.kind")}
              <select value={kind} onChange={(e) => setKind(e.target.value as "classification" | "detection")} disabled={!!source}>
                <option value="classification">{t("new.kindClassification")}</option>
                <option value="detection">{t("new.kindDetection")}</option>
              </select>
            </label>
            <label>
              {t("new.modelType")}
              <select value={modelType} onChange={(e) => setModelType(Number(e.target.value) as 0 | 1)} disabled={!!source}>
                <option value={0}>{t("new.modelClasses")}</option>
                <option value={1}>{t("new.modelRegression")}</option>
              </select>
            </label>
            {task === "vision" ? (
              <ColumnSelect
                id="images-col"
                label={t("new.imagesCol")}
                columns={cols.slice(1)}
                value={imagesCol}
                onChange={setImagesCol}
                help={t("new.imagesColHelp")}
              />
            ) : null}
            {!source && kind !== "detection" ? (
              <ColumnSelect
                id="split-col"
                label={t("new.splitCol")}
                columns={cols.slice(1).filter((c) => c.type === "categorical")}
                value={splitCol}
                onChange={setSplitCol}
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
                value={positiveClass ?? ""}
                onChange={(e) => setPositiveChoice(e.target.value)}
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
            columns={cols.slice(1).filter((c) => c.name !== imagesCol && c.name !== splitCol)}
            value={labelCols}
            onChange={setLabelCols}
            testId="label-cols"
          />
          {task === "data" ? (
            <ColumnChecklist legend={t("new.dataCols")} columns={candidates} value={dataCols} onChange={setDataCols} testId="data-cols" />
          ) : null}
          {subgroupCandidates.length ? (
            <details className="starters" data-testid="subgroups-picker" open={chosenSubgroups.length > 0}>
              <summary>{t("new.subgroups")}</summary>
              <ColumnChecklist
                legend={t("new.subgroupCols")}
                columns={subgroupCandidates}
                value={chosenSubgroups}
                onChange={setSubgroupCols}
                testId="subgroup-cols"
              />
            </details>
          ) : null}

          <h2>{t("new.step3")}</h2>
          <div className="grid2">
            <LabelInputs name={name} description={description} onName={setName} onDescription={setDescription} optional />
            <label>
              {t("new.metric")}
              <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
                <option value="AUC">AUC</option>
                <option value="F-macro">{t("new.metricF1")}</option>
                <option value="Precision">{t("new.metricPrecision")}</option>
                <option value="Recall">{t("new.metricRecall")}</option>
              </select>
            </label>
            <fieldset>
              <legend>{t("new.qualityOrTime")}</legend>
              <label className="check">
                <input type="radio" name="opt" checked={optimization === 1} onChange={() => setOptimization(1)} /> {t("new.fastest")}
              </label>
              <label className="check">
                <input type="radio" name="opt" checked={optimization === 0} onChange={() => setOptimization(0)} /> {t("new.bestQuality")}
              </label>
            </fieldset>
            <label>
              {t("new.budget")}
              <input
                type="number"
                min={1}
                step="any"
                inputMode="numeric"
                value={budget}
                onChange={(e) => setBudget(e.target.value)}
                placeholder={t("new.budgetDefault")}
                data-testid="budget"
              />
            </label>
            <label>
              {t("new.experimentId")}
              <input
                type="number"
                min={1}
                required
                value={experimentId ?? ""}
                onChange={(e) => setExperimentId(e.target.value ? Number(e.target.value) : null)}
                data-testid="experiment-id"
              />
              <span className="muted small">{t("new.experimentIdHelp")}</span>
            </label>
          </div>
          <details>
            <summary>{t("new.advanced")}</summary>
            <label>
              {t("new.callbackUrl")}
              <input type="url" value={callbackUrl} onChange={(e) => setCallbackUrl(e.target.value)} placeholder="https://…" />
            </label>
            <label>
              {t("new.userToken")}
              <input value={userToken} onChange={(e) => setUserToken(e.target.value)} autoComplete="off" />
            </label>
            <p className="muted small">
              {t("new.user")} <code>{session.user_id}</code> {t("new.userFromSession")}
            </p>
          </details>
          <div className="actions">
            <button type="button" className="secondary" onClick={check} disabled={checking}>
              {checking ? t("new.checking") : t("new.check")}
            </button>
            <button type="submit" disabled={submitting || !experimentId || (report !== null && !report.valid)}>
              {submitting ? t("new.starting") : source ? t("new.startTest") : t("new.build")}
            </button>
          </div>
          {report ? <DatasetReportView report={report} /> : null}
        </form>
      ) : null}
    </section>
  );
}
