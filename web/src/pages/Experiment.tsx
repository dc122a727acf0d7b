import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Experiment, Model, Report } from "../api/types";
import { DatasetReportView, DatasetSummaryView } from "../components/DatasetReportView";
import { unseenValueNotes } from "../lib/unseen";
import { MetricsTable, PerClassTable } from "../components/MetricsView";
import { ConfusionTable, ResultBadge, VerdictBox } from "../components/ClinicalResult";
import { SubgroupsSection } from "../components/Subgroups";
import { RetrospectiveStudies } from "../components/RetrospectiveStudies";
import { ErrorBox, Link, StatusBadge } from "../components/ui";
import { FigureCard, figureTables } from "../components/FigureCard";
import { ProgressMessage } from "../components/ProgressMessage";
import { ExperimentLabelsEditor } from "../components/ExperimentLabels";
import { IntendedUseEditor } from "../components/IntendedUse";
import { ApprovalPanel } from "../components/Approval";
import { InputCheckPanel } from "../components/InputCheck";
import { PacsAutoScorePanel } from "../components/PacsAutoScore";
import { OperatingPointPanel } from "../components/OperatingPoint";
import { MonitoringTab } from "../components/monitoring/MonitoringTab";
import { formatEta, useSteadyEta } from "../lib/eta";
import { experimentTitle, formatDate, formatDuration, formatNumber, formatPercent } from "../lib/format";
import { navigate } from "../lib/router";
import { NotAllowedNote, usePermission, useWorkspace } from "../workspace";
import { currentLanguage } from "../i18n";

const TERMINAL = new Set(["ready", "invalid_dataset", "failed", "cancelled"]);

/**
 * Follows an experiment live: server-sent events while it runs (the browser's EventSource reconnects and replays
 * from Last-Event-ID); if the stream keeps failing, polling with backoff (1 s doubling to 15 s) takes over.
 */
function useLiveExperiment(id: number) {
  const [exp, setExp] = useState<Experiment | null>(null);
  const [error, setError] = useState<unknown>(null);
  const refresh = useCallback(
    () => call("get", "/v1/experiments/{experiment_id}", { path: { experiment_id: id } }).then((e) => (setExp(e), setError(null), e)),
    [id],
  );

  useEffect(() => {
    let closed = false;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = (delay: number) => {
      // refresh's failure is caught and shown: the timer has no promise to watch.
      timer = setTimeout(
        () =>
          void (async () => {
            if (closed) return;
            const e = await refresh().catch((err) => (setError(err), null));
            if (!e || !TERMINAL.has(e.status)) poll(Math.min(delay * 2, 15_000));
          })(),
        delay,
      );
    };
    refresh().then(
      (e) => {
        if (closed || TERMINAL.has(e.status)) return;
        let failures = 0;
        source = new EventSource(`/v1/experiments/${id}/events`);
        source.addEventListener("status", (m) => {
          failures = 0;
          const s = (JSON.parse(m.data as string) as { status: string }).status;
          void refresh();
          if (TERMINAL.has(s)) source?.close();
        });
        source.addEventListener("progress", (m) => {
          failures = 0;
          const p = JSON.parse(m.data as string) as Experiment["progress"];
          setExp((x) => (x ? { ...x, progress: p } : x));
        });
        source.onerror = () => {
          // CLOSED: the server refused the stream (e.g. 429 too_many_streams, other tabs hold this user's
          // streams), and EventSource never retries that by itself: poll instead of showing a frozen page.
          if (source?.readyState === EventSource.CLOSED && !closed) return void poll(1000);
          if (++failures < 3 || closed) return;
          source?.close();
          poll(1000);
        };
      },
      (err) => setError(err),
    );
    return () => {
      closed = true;
      source?.close();
      clearTimeout(timer);
    };
  }, [id, refresh]);
  return { exp, error, refresh };
}

export function ExperimentPage({ id, tab }: { id: number; tab?: string | null }) {
  const { t, i18n } = useTranslation("result");
  const { exp, error, refresh } = useLiveExperiment(id);
  // "Built by" matters where several people build: a shared workspace (in a personal one it is always you).
  const shared = useWorkspace().current?.personal === false;
  // What the caller's role allows here (the server's table); what it does not is hidden, with a sentence saying why.
  const canDelete = usePermission("experiment.delete");
  const canBuild = usePermission("experiment.build");
  const [report, setReport] = useState<Report | null>(null);
  const [model, setModel] = useState<Model | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const loadedFor = useRef<string | null>(null);
  const eta = useSteadyEta(exp?.progress?.eta_s);

  useEffect(() => {
    if (exp?.status !== "ready" || loadedFor.current === `${id}`) return;
    loadedFor.current = `${id}`;
    call("get", "/v1/experiments/{experiment_id}/report", { path: { experiment_id: id } }).then(setReport, setActionError);
    call("get", "/v1/models/{experiment_id}", { path: { experiment_id: id } }).then(setModel, setActionError);
  }, [exp?.status, id]);

  if (error && !exp) return <ErrorBox error={error} />;
  if (!exp) return <p aria-busy="true">{t("common:loading")}</p>;
  const req = exp.request as Record<string, unknown>;
  const deleting = exp.status === "deleting";
  const running = !TERMINAL.has(exp.status) && !deleting;
  const retrospective = req.study_type === "Retrospective";
  const started = new Date(String(exp.created_at)).getTime();
  const ended = exp.finished_at ? new Date(exp.finished_at as string).getTime() : Date.now();
  const tables = figureTables(report?.report);
  // A published model (not a Retrospective study, which only tests one) has a Monitoring tab: ?tab=monitoring.
  const monitorable = exp.status === "ready" && !!model && !retrospective;
  const showMonitoring = monitorable && tab === "monitoring";
  // The pipeline's words for why a class was taken (pipelines/.../clinical.py RULE_RARER, RULE_TIE).
  const ruleText = (rule: string) =>
    rule === "less frequent class" ? t("page.ruleRarer") : rule.startsWith("classes equally frequent") ? t("page.ruleTie") : rule;

  const cancel = async () => {
    setActionError(null);
    try {
      await call("post", "/v1/experiments/{experiment_id}/cancel", { path: { experiment_id: id } });
      await refresh();
    } catch (err) {
      setActionError(err);
    }
  };

  // DELETE /v1/experiments/{id}: the model stops serving before it answers; the files go in the background.
  const remove = async () => {
    const label = exp.name ? `"${exp.name}" (#${id})` : `#${id}`;
    if (!window.confirm(t("page.confirmDelete", { label }))) return;
    setActionError(null);
    try {
      await call("delete", "/v1/experiments/{experiment_id}", { path: { experiment_id: id } });
      navigate("/experiments");
    } catch (err) {
      setActionError(err);
    }
  };

  return (
    <section data-testid="experiment" data-status={exp.status}>
      <div className="title-row">
        <h1>
          {experimentTitle(exp)} {exp.name ? <span className="muted small">#{exp.experiment_id}</span> : null} <ResultBadge exp={exp} />
        </h1>
        {running && canBuild.allowed ? (
          <button type="button" className="danger" onClick={cancel} disabled={exp.cancel_requested}>
            {exp.cancel_requested ? t("page.cancelling") : t("page.cancel")}
          </button>
        ) : null}
        {deleting || !canDelete.allowed ? null : (
          <button type="button" className="danger" onClick={remove} data-testid="delete-experiment">
            {t("page.delete")}
          </button>
        )}
      </div>
      <p className="muted">
        {t(`experiments:list.studyType.${String(req.study_type)}`, { defaultValue: String(req.study_type) })} ·{" "}
        {t(`common:task.${String(req.task)}`, { defaultValue: String(req.task) })} ·{" "}
        {t(`common:kind.${String(req.type_of_experiment)}`, { defaultValue: String(req.type_of_experiment) })} ·{" "}
        {t("page.optimising", { metric: String(req.optimization_metric) })} ·{" "}
        {req.optimization_type === 0 ? t("page.bestQuality") : t("page.fastest")} ·{" "}
        {t("page.created", { date: formatDate(String(exp.created_at)) })} · {formatDuration((ended - started) / 1000)}
        {shared ? (
          <>
            {" "}
            · <span data-testid="built-by">{t("page.builtBy", { who: exp.built_by ?? t("approval.formerMember") })}</span>
          </>
        ) : null}
        {retrospective && exp.source_experiment_id ? (
          <>
            {" "}
            · {t("page.testing")} <Link to={`/experiments/${exp.source_experiment_id}`}>#{exp.source_experiment_id}</Link>
          </>
        ) : null}
      </p>
      {deleting ? null : <NotAllowedNote allowance={canDelete} />}
      <ExperimentLabelsEditor exp={exp} onSaved={() => void refresh()} editable={canBuild.allowed} />
      <ErrorBox error={actionError} />
      {deleting ? <p className="card">{t("page.beingDeleted")}</p> : null}
      {running ? (
        <div className="card" aria-live="polite">
          <progress max={1} value={exp.progress?.fraction ?? 0} aria-label={t("page.progress")} />
          <p>
            <strong>{t(`common:status.${exp.progress?.stage ?? exp.status}`, { defaultValue: exp.progress?.stage ?? exp.status })}</strong>{" "}
            {exp.progress ? formatPercent(exp.progress.fraction, 0) : ""}
            {exp.progress?.epoch && exp.progress.epochs ? ` · ${t("page.epoch", { n: exp.progress.epoch, of: exp.progress.epochs })}` : ""}
            {exp.progress?.trial && exp.progress.trials
              ? ` · ${t("page.trial", { n: exp.progress.trial, of: Math.max(exp.progress.trial, exp.progress.trials) })}`
              : ""}
            {eta ? ` · ${t("page.eta", { eta: formatEta(eta.seconds) })}` : ""}
          </p>
          {exp.progress ? <ProgressMessage progress={exp.progress} /> : null}
        </div>
      ) : null}
      {exp.failure_reason ? (
        <div className="error" role="alert">
          <strong>{exp.status === "invalid_dataset" ? t("page.invalidDataset") : t("page.failed")}:</strong>{" "}
          {/* Said by the server in the dashboard's language from its catalog code; a reason stored before codes
              (failure_code null) is the English it was, marked so on a non-English page. */}
          <span lang={exp.failure_code || i18n.resolvedLanguage === "en" ? undefined : "en"}>{exp.failure_reason}</span>
        </div>
      ) : null}
      {exp.status === "invalid_dataset" && exp.dataset_report ? <DatasetReportView report={exp.dataset_report} /> : null}

      {monitorable ? <ModelTabs id={id} monitoring={showMonitoring} /> : null}
      {showMonitoring ? (
        <div role="tabpanel" id="model-tabpanel" aria-labelledby="tab-monitoring">
          <MonitoringTab experimentId={id} />
        </div>
      ) : null}
      {exp.status === "ready" && exp.metrics && !showMonitoring ? (
        <>
          <VerdictBox warnings={exp.warnings ?? []} />
          <h2>{retrospective ? t("page.resultsNew") : t("page.resultsTest")}</h2>
          {exp.positive_class ? (
            <p data-testid="positive-class">
              {t("page.positiveClass")} <strong>{exp.positive_class.name}</strong>
              {exp.positive_class.name !== exp.positive_class.code ? ` ${t("page.inCsv", { code: exp.positive_class.code })}` : ""}
              <span className="muted">
                {" "}
                ·{" "}
                {exp.positive_class.rule === "requested"
                  ? t("page.chosenInRequest")
                  : t("page.chosenByBuilder", { rule: ruleText(exp.positive_class.rule) })}
                . {t("page.positiveMetrics")}
              </span>
            </p>
          ) : null}
          <MetricsTable
            metrics={exp.metrics}
            compare={retrospective ? exp.original_metrics : undefined}
            compareLabel={t("page.internalTestOf", { id: exp.source_experiment_id })}
            caption={retrospective ? t("page.metricsCaptionNew") : t("page.metricsCaption")}
            positiveName={exp.positive_class?.name}
          />
          <RetrospectiveStudies exp={exp} />
          {exp.confusion_matrix ? <ConfusionTable cm={exp.confusion_matrix} /> : null}
          <UnseenValuesNote report={report?.report} />
          <PerClassTable metrics={exp.metrics} classes={model?.classes} />
          <SubgroupsSection exp={exp} />
          <div className="actions">
            <Link to={`/experiments/${id}/try`} className="button">
              {t("page.tryIt")}
            </Link>
            <a className="button secondary" href={`/v1/models/${id}/download`} download>
              {t("page.downloadOnnx")}
            </a>
            {!retrospective && canBuild.allowed ? (
              <Link to={`/experiments/new?source=${id}`} className="button secondary">
                {t("page.testOnNewData")}
              </Link>
            ) : null}
            <a className="button secondary" href={`/v1/experiments/${id}/logs`} target="_blank" rel="noreferrer">
              {t("page.trainingLog")}
            </a>
            {/* The model card as one self-contained page: open it, print it to PDF or attach it to a submission.
                In the dashboard's language (the Account page's choice), not only the browser's Accept-Language. */}
            <a
              className="button secondary"
              href={`/v1/experiments/${id}/report.html?lang=${currentLanguage(i18n.resolvedLanguage)}`}
              download={`model-card-experiment-${id}.html`}
              data-testid="download-report"
            >
              {t("page.downloadReport")}
            </a>
          </div>
          {/* Testing on new data is a new build: say why the button is not there. */}
          {!retrospective ? <NotAllowedNote allowance={canBuild} /> : null}
          <IntendedUseEditor exp={exp} onSaved={() => void refresh()} />
          {model ? (
            <ApprovalPanel experimentId={id} version={exp.history.filter((h) => h.version).at(-1)?.version ?? model.version} />
          ) : null}
          {!retrospective && exp.positive_class ? <OperatingPointPanel experimentId={id} onChanged={() => void refresh()} /> : null}
          {!retrospective && model ? <InputCheckPanel experimentId={id} onChanged={() => void refresh()} /> : null}
          {!retrospective && model ? <PacsAutoScorePanel experimentId={id} image={model.kind !== "tabular"} /> : null}
          {report ? (
            <>
              <h2>{t("page.figures")}</h2>
              {report.figures.length === 0 ? <p className="muted">{t("page.noFigures")}</p> : null}
              <div className="figures" data-testid="figures">
                {report.figures.map((f) => (
                  <FigureCard key={f.name} figure={f} table={tables[f.name]} />
                ))}
              </div>
            </>
          ) : null}
          {model ? <ModelInputs model={model} /> : null}
        </>
      ) : null}

      {exp.dataset_report && exp.status !== "invalid_dataset" && !showMonitoring ? (
        <>
          <h2>{t("page.dataset")}</h2>
          <DatasetSummaryView summary={exp.dataset_report.summary} />
        </>
      ) : null}
      <h2>{t("page.history")}</h2>
      <ol className="history">
        {exp.history.map((h, i) => (
          <li key={i}>
            <StatusBadge status={h.status} /> {formatDate(h.at)}
            {h.attempt ? <span className="muted small"> {t("page.attempt", { n: h.attempt })}</span> : null}
            {h.event ? (
              <span className="small">
                {" "}
                {h.event === "operating_point_saved"
                  ? t("page.operatingPointSaved", { version: h.version })
                  : h.event === "input_check_mode_changed"
                    ? t("page.inputCheckChanged", { version: h.version })
                    : t("page.versionCurrent", { version: h.version })}
              </span>
            ) : null}
          </li>
        ))}
      </ol>
      <details>
        <summary>{t("page.request")}</summary>
        <pre>
          <code>{JSON.stringify(exp.request, null, 2)}</code>
        </pre>
      </details>
    </section>
  );
}

/** Results | Monitoring, as links (?tab=monitoring) so that a tab can be bookmarked and Back returns to the other. */
function ModelTabs({ id, monitoring }: { id: number; monitoring: boolean }) {
  const { t } = useTranslation("monitoring");
  const tabs: Array<[string, string, boolean]> = [
    ["results", t("resultsTab"), !monitoring],
    ["monitoring", t("tab"), monitoring],
  ];
  return (
    <div role="tablist" aria-label={t("tabs")} className="model-tabs">
      {tabs.map(([key, label, selected], i) => (
        <button
          key={key}
          type="button"
          role="tab"
          id={`tab-${key}`}
          aria-selected={selected}
          aria-controls={selected && key === "monitoring" ? "model-tabpanel" : undefined}
          tabIndex={selected ? 0 : -1}
          className={selected ? "tab active" : "tab"}
          data-testid={`tab-${key}`}
          onClick={() => navigate(key === "monitoring" ? `/experiments/${id}?tab=monitoring` : `/experiments/${id}`)}
          onKeyDown={(e) => {
            const d = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
            if (!d) return;
            const next = tabs[(i + d + tabs.length) % tabs.length][0];
            navigate(next === "monitoring" ? `/experiments/${id}?tab=monitoring` : `/experiments/${id}`);
            setTimeout(() => document.getElementById(`tab-${next}`)?.focus());
          }}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

function UnseenValuesNote({ report }: { report: Record<string, unknown> | null | undefined }) {
  const { t } = useTranslation("result");
  const rows = typeof report?.rows === "number" ? report.rows : undefined;
  const notes = unseenValueNotes(report, rows);
  if (!notes.length) return null;
  return (
    <div className="note" role="note" data-testid="unseen-values">
      <strong>{t("page.unseen")}</strong>
      <ul>
        {notes.map((n) => (
          <li key={n}>{n}</li>
        ))}
      </ul>
    </div>
  );
}

function ModelInputs({ model }: { model: Model }) {
  const { t } = useTranslation("result");
  return (
    <>
      <h2>{t("inputs.title")}</h2>
      <dl className="facts">
        <div>
          <dt>{t("inputs.kind")}</dt>
          <dd>{t("inputs.kindValue", { kind: model.kind, problem: model.problem, version: model.version })}</dd>
        </div>
        {model.inputs.image ? (
          <div>
            <dt>{t("inputs.image")}</dt>
            <dd>
              {t("inputs.imageValue", {
                width: model.inputs.image.width,
                height: model.inputs.image.height,
                channels: model.inputs.image.channels,
              })}
            </dd>
          </div>
        ) : null}
        {model.inputs.data_cols ? (
          <div>
            <dt>{t("inputs.dataCols")}</dt>
            <dd>{model.inputs.data_cols.join(", ")}</dd>
          </div>
        ) : null}
        {model.threshold_rule ? (
          <div>
            <dt>{t("inputs.thresholdRule")}</dt>
            <dd>{model.threshold_rule}</dd>
          </div>
        ) : null}
        {model.detection ? (
          <div>
            <dt>{t("inputs.detection")}</dt>
            <dd>
              {t("inputs.detectionValue", {
                score: model.detection.score_threshold,
                iou: model.detection.nms_iou,
                max: model.detection.max_detections,
              })}
            </dd>
          </div>
        ) : null}
      </dl>
      <div className="table-wrap" tabIndex={0}>
        <table aria-label={t("inputs.classesAndThresholds")}>
          <thead>
            <tr>
              <th scope="col">{t("inputs.class")}</th>
              <th scope="col">{t("inputs.threshold")}</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(model.classes).map(([i, name]) => (
              <tr key={i}>
                <td>{name}</td>
                <td>{formatNumber(model.thresholds?.[Number(i)])}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
