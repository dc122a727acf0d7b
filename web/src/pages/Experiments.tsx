import { useEffect, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { ExperimentList, ExperimentStatus } from "../api/types";
import { ErrorBox, Link, StatusBadge } from "../components/ui";
import { experimentTitle, formatDate, formatDuration, formatNumber, formatPercent } from "../lib/format";
import { navigate } from "../lib/router";
import { NotAllowedNote, usePermission, useWorkspace } from "../workspace";

/** Filter value, its label's key (list.group.*), the statuses it shows. */
const STATUS_GROUPS: Array<[string, ExperimentStatus[] | null]> = [
  ["all", null],
  ["running", ["queued", "fetching", "validating", "training", "evaluating", "publishing"]],
  ["ready", ["ready"]],
  ["problems", ["failed", "invalid_dataset"]],
  ["cancelled", ["cancelled"]],
];

/** The server's limit on ?q= (src/experiments/request.ts SEARCH_MAX). */
const SEARCH_MAX = 200;

const metricName: Record<string, string> = { AUC: "auc", "F-macro": "f_macro", Precision: "precision", Recall: "recall" };

/** The experiments list; the filters live in the URL so a filtered view can be bookmarked or shared. */
export function ExperimentsPage({ query }: { query: URLSearchParams }) {
  const { t } = useTranslation("experiments");
  const group = query.get("status") ?? "all";
  const task = query.get("task") ?? "all";
  const search = query.get("q") ?? "";
  const [searchText, setSearchText] = useState(search);
  const [list, setList] = useState<ExperimentList | null>(null);
  const [error, setError] = useState<unknown>(null);
  // "Built by" where several people build (a shared workspace); New experiment where the role may build.
  const shared = useWorkspace().current?.personal === false;
  const canBuild = usePermission("experiment.build");
  const [details, setDetails] = useState<Record<number, { metric?: string; value?: number | null }>>({});

  useEffect(() => {
    const statuses = STATUS_GROUPS.find(([k]) => k === group)?.[1];
    setList(null);
    setError(null);
    call("get", "/v1/experiments", { query: { limit: 200, status: statuses?.join(","), q: search || undefined } }).then(setList, setError);
  }, [group, search]);

  // Back/forward changes the URL's q: the box follows it.
  useEffect(() => setSearchText(search), [search]);

  // The list route carries no metrics; ready ones are read one by one (the list is capped at 200).
  useEffect(() => {
    if (!list) return;
    for (const e of list.data.filter((x) => x.status === "ready" && !(x.experiment_id in details)).slice(0, 50)) {
      call("get", "/v1/experiments/{experiment_id}", { path: { experiment_id: e.experiment_id } }).then(
        (full) => {
          const metric = full.request.optimization_metric;
          const m = typeof metric === "string" ? metric : "AUC";
          setDetails((d) => ({ ...d, [e.experiment_id]: { metric: m, value: full.metrics?.[metricName[m] ?? "auc"]?.value ?? null } }));
        },
        () => undefined,
      );
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [list]);

  const setFilter = (k: string, v: string) => {
    const q = new URLSearchParams(query);
    if (v === "all") q.delete(k);
    else q.set(k, v);
    navigate(`/experiments${q.size ? `?${q}` : ""}`);
  };
  const submitSearch = (e: FormEvent) => {
    e.preventDefault();
    const q = new URLSearchParams(query);
    if (searchText.trim()) q.set("q", searchText.trim());
    else q.delete("q");
    navigate(`/experiments${q.size ? `?${q}` : ""}`);
  };

  const rows = (list?.data ?? []).filter(
    (e) => task === "all" || e.task === task || (task === "detection" && e.type_of_experiment === "detection"),
  );
  return (
    <section>
      <div className="title-row">
        <h1>{t("list.title")}</h1>
        {canBuild.allowed ? (
          <Link to="/experiments/new" className="button">
            {t("new.title")}
          </Link>
        ) : null}
      </div>
      <NotAllowedNote allowance={canBuild} />
      <form role="search" className="row-form" onSubmit={submitSearch}>
        <label>
          {t("list.search")}
          <input
            type="search"
            value={searchText}
            maxLength={SEARCH_MAX}
            placeholder={t("list.searchPlaceholder")}
            onChange={(e) => setSearchText(e.target.value)}
          />
        </label>
        <button type="submit" className="secondary">
          {t("list.search")}
        </button>
      </form>
      <div className="filters" role="group" aria-label={t("list.filters")}>
        <label>
          {t("list.status")}
          <select value={group} onChange={(e) => setFilter("status", e.target.value)}>
            {STATUS_GROUPS.map(([k]) => (
              <option key={k} value={k}>
                {t(`list.group.${k}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("new.task")}
          <select value={task} onChange={(e) => setFilter("task", e.target.value)}>
            <option value="all">{t("list.group.all")}</option>
            <option value="vision">{t("new.taskVision")}</option>
            <option value="data">{t("list.taskTables")}</option>
            <option value="detection">{t("list.taskDetection")}</option>
          </select>
        </label>
      </div>
      <ErrorBox error={error} />
      {list === null && !error ? <p aria-busy="true">{t("common:loading")}</p> : null}
      {list && rows.length === 0 ? (
        search ? (
          <p>{t("list.noMatch", { search })}</p>
        ) : (
          <p>
            {t("list.empty")} {canBuild.allowed ? <Link to="/experiments/new">{t("list.emptyLink")}</Link> : null}
          </p>
        )
      ) : null}
      {rows.length ? (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label={t("list.title")} data-testid="experiments">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">{t("labels.name")}</th>
                <th scope="col">{t("list.status")}</th>
                {shared ? <th scope="col">{t("list.builtBy")}</th> : null}
                <th scope="col">{t("list.study")}</th>
                <th scope="col">{t("list.metric")}</th>
                <th scope="col">{t("list.created")}</th>
                <th scope="col">{t("list.duration")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => {
                const d = details[e.experiment_id];
                const end = e.finished_at ? new Date(e.finished_at as string).getTime() : Date.now();
                return (
                  <tr key={e.experiment_id}>
                    <td>
                      <Link to={`/experiments/${e.experiment_id}`}>#{e.experiment_id}</Link>
                    </td>
                    <td className="experiment-name">
                      <Link to={`/experiments/${e.experiment_id}`}>{experimentTitle(e)}</Link>
                      <div className="muted small">
                        {t(`common:task.${e.task}`, { defaultValue: e.task })} ·{" "}
                        {t(`common:kind.${e.type_of_experiment}`, { defaultValue: e.type_of_experiment })}
                      </div>
                    </td>
                    <td>
                      <StatusBadge status={e.status} />
                      {e.progress && !e.finished_at ? <span className="muted small"> {formatPercent(e.progress.fraction, 0)}</span> : null}
                    </td>
                    {shared ? <td data-testid="built-by">{e.built_by ?? t("list.formerMember")}</td> : null}
                    <td>{t(`list.studyType.${e.study_type}`, { defaultValue: e.study_type })}</td>
                    <td>{d?.value !== undefined && d.value !== null ? `${d.metric} ${formatNumber(d.value)}` : "–"}</td>
                    <td>{formatDate(String(e.created_at))}</td>
                    <td>{formatDuration((end - new Date(String(e.created_at)).getTime()) / 1000)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
