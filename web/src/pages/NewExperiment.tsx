import { useEffect, useMemo, useState, type FormEvent } from "react";
import { api } from "../api/client";
import type { Columns, DatasetReport, ExperimentList, ExperimentRequest, UploadResult } from "../api/types";
import { ColumnChecklist, ColumnSelect } from "../components/ColumnPickers";
import { DatasetReportView } from "../components/DatasetReportView";
import { DatasetStarters } from "../components/DatasetStarters";
import { Uploader } from "../components/Uploader";
import { LabelInputs } from "../components/ExperimentLabels";
import { ErrorBox } from "../components/ui";
import { binaryLabelValues, inputCandidates, proposeColumns } from "../lib/columns";
import { formatBytes, proposeExperimentId } from "../lib/format";
import { navigate } from "../lib/router";
import { useSession } from "../session";

type Metric = ExperimentRequest["optimization_metric"];

/**
 * Upload a zip, read its dataset report, choose columns and settings, build. Every field of the seed's request
 * is here; experiment_id is proposed. With ?source=<id> it is a Retrospective study of that model on new data.
 */
export function NewExperimentPage({ query }: { query: URLSearchParams }) {
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
      <h1>{source ? `Test experiment #${source} on new data` : "New experiment"}</h1>
      {source ? (
        <p>
          A Retrospective study: the model of experiment #{source} is evaluated on the zip you upload, and its metrics are shown beside the
          internal ones.
        </p>
      ) : null}
      <h2>1. Upload the dataset</h2>
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
          Stored as <code>{upload.zip_gcloud}</code> ({formatBytes(upload.size)}, sha256 {upload.sha256.slice(0, 12)}…)
          {licence ? (
            <>
              <br />
              <span data-testid="sample-licence">Sample data: {licence}</span>
            </>
          ) : null}
        </p>
      ) : null}
      <ErrorBox error={error} />
      {columns ? (
        <form onSubmit={submit} aria-label="Experiment settings">
          <h2>2. Choose the columns</h2>
          <p className="muted small">
            {columns.csv_path ?? "CSV"}: {columns.rows} rows, {columns.columns.length} columns. The first column ({cols[0]?.name}) is the
            patient id.
          </p>
          <div className="grid2">
            <label>
              Task
              <select value={task} onChange={(e) => setTask(e.target.value as "vision" | "data")} disabled={!!source}>
                <option value="data">Table of clinical variables (data)</option>
                <option value="vision">Images (vision)</option>
              </select>
            </label>
            <label>
              Type of experiment
              <select value={kind} onChange={(e) => setKind(e.target.value as "classification" | "detection")} disabled={!!source}>
                <option value="classification">Classification</option>
                <option value="detection">Detection (boxes)</option>
              </select>
            </label>
            <label>
              Model type
              <select value={modelType} onChange={(e) => setModelType(Number(e.target.value) as 0 | 1)} disabled={!!source}>
                <option value={0}>Classification (classes)</option>
                <option value={1}>Regression (a number)</option>
              </select>
            </label>
            {task === "vision" ? (
              <ColumnSelect
                id="images-col"
                label="Images column"
                columns={cols.slice(1)}
                value={imagesCol}
                onChange={setImagesCol}
                help="the column with each row's image path in the zip"
              />
            ) : null}
            {!source && kind !== "detection" ? (
              <ColumnSelect
                id="split-col"
                label="Split column (optional)"
                columns={cols.slice(1).filter((c) => c.type === "categorical")}
                value={splitCol}
                onChange={setSplitCol}
                optional="None: Builder splits by patient (70/15/15)"
                help="train / validation / test per row; a patient's rows must agree"
              />
            ) : null}
          </div>
          {binary ? (
            <label htmlFor="positive-class">
              Positive class (the disease or finding)
              <select
                id="positive-class"
                value={positiveClass ?? ""}
                onChange={(e) => setPositiveChoice(e.target.value)}
                aria-describedby="positive-class-help"
                data-testid="positive-class"
              >
                {binary.values.map((v) => (
                  <option key={v} value={v}>
                    {v} ({binary.counts[v]} rows{v === binary.proposed ? ", the less frequent" : ""})
                  </option>
                ))}
              </select>
              <span id="positive-class-help" className="muted small">
                sensitivity, specificity, PPV and NPV are reported for this class; proposed: the less frequent one
              </span>
            </label>
          ) : null}
          <ColumnChecklist
            legend="Label column(s): what the model predicts"
            columns={cols.slice(1).filter((c) => c.name !== imagesCol && c.name !== splitCol)}
            value={labelCols}
            onChange={setLabelCols}
            testId="label-cols"
          />
          {task === "data" ? (
            <ColumnChecklist
              legend="Input columns (data_cols)"
              columns={candidates}
              value={dataCols}
              onChange={setDataCols}
              testId="data-cols"
            />
          ) : null}
          {subgroupCandidates.length ? (
            <details className="starters" data-testid="subgroups-picker" open={chosenSubgroups.length > 0}>
              <summary>Subgroups (optional): test figures per group of patients, e.g. by sex, age or site</summary>
              <ColumnChecklist
                legend="Subgroup columns: a column meant for grouping (category labels are shown as written; numbers are cut in quartiles)"
                columns={subgroupCandidates}
                value={chosenSubgroups}
                onChange={setSubgroupCols}
                testId="subgroup-cols"
              />
            </details>
          ) : null}

          <h2>3. Settings</h2>
          <div className="grid2">
            <LabelInputs name={name} description={description} onName={setName} onDescription={setDescription} optional />
            <label>
              Optimisation metric
              <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)}>
                <option value="AUC">AUC</option>
                <option value="F-macro">F1 (macro)</option>
                <option value="Precision">Precision</option>
                <option value="Recall">Recall (sensitivity)</option>
              </select>
            </label>
            <fieldset>
              <legend>Quality or time</legend>
              <label className="check">
                <input type="radio" name="opt" checked={optimization === 1} onChange={() => setOptimization(1)} /> Fastest (minutes)
              </label>
              <label className="check">
                <input type="radio" name="opt" checked={optimization === 0} onChange={() => setOptimization(0)} /> Best quality (longer)
              </label>
            </fieldset>
            <label>
              Time budget in seconds (optional)
              <input
                type="number"
                min={1}
                step="any"
                inputMode="numeric"
                value={budget}
                onChange={(e) => setBudget(e.target.value)}
                placeholder="server default"
                data-testid="budget"
              />
            </label>
            <label>
              Experiment ID
              <input
                type="number"
                min={1}
                required
                value={experimentId ?? ""}
                onChange={(e) => setExperimentId(e.target.value ? Number(e.target.value) : null)}
                data-testid="experiment-id"
              />
              <span className="muted small">proposed: one more than your highest</span>
            </label>
          </div>
          <details>
            <summary>Advanced</summary>
            <label>
              Callback URL (optional): Builder POSTs the result there when the experiment ends
              <input type="url" value={callbackUrl} onChange={(e) => setCallbackUrl(e.target.value)} placeholder="https://…" />
            </label>
            <label>
              User token (optional): the seed API's field, accepted for compatibility and never stored
              <input value={userToken} onChange={(e) => setUserToken(e.target.value)} autoComplete="off" />
            </label>
            <p className="muted small">
              User: <code>{session.user_id}</code> (user_id, from your session)
            </p>
          </details>
          <div className="actions">
            <button type="button" className="secondary" onClick={check} disabled={checking}>
              {checking ? "Checking…" : "Check dataset"}
            </button>
            <button type="submit" disabled={submitting || !experimentId || (report !== null && !report.valid)}>
              {submitting ? "Starting…" : source ? "Start the test" : "Build model"}
            </button>
          </div>
          {report ? <DatasetReportView report={report} /> : null}
        </form>
      ) : null}
    </section>
  );
}
