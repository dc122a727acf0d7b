import { useEffect, useState, type FormEvent } from "react";
import { api } from "../api/client";
import type { ExperimentList, ExperimentStatus } from "../api/types";
import { ErrorBox, Link, StatusBadge } from "../components/ui";
import { experimentTitle, formatDate, formatDuration } from "../lib/format";
import { navigate } from "../lib/router";

const STATUS_GROUPS: Array<[string, string, ExperimentStatus[] | null]> = [
  ["all", "All", null],
  ["running", "Running", ["queued", "fetching", "validating", "training", "evaluating", "publishing"]],
  ["ready", "Ready", ["ready"]],
  ["problems", "Failed or invalid", ["failed", "invalid_dataset"]],
  ["cancelled", "Cancelled", ["cancelled"]],
];

/** The server's limit on ?q= (src/experiments/request.ts SEARCH_MAX). */
const SEARCH_MAX = 200;

const metricName: Record<string, string> = { AUC: "auc", "F-macro": "f_macro", Precision: "precision", Recall: "recall" };

/** The experiments list; the filters live in the URL so a filtered view can be bookmarked or shared. */
export function ExperimentsPage({ query }: { query: URLSearchParams }) {
  const group = query.get("status") ?? "all";
  const task = query.get("task") ?? "all";
  const search = query.get("q") ?? "";
  const [searchText, setSearchText] = useState(search);
  const [list, setList] = useState<ExperimentList | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [details, setDetails] = useState<Record<number, { metric?: string; value?: number | null }>>({});

  useEffect(() => {
    const statuses = STATUS_GROUPS.find(([k]) => k === group)?.[2];
    const params = new URLSearchParams({ limit: "200" });
    if (statuses) params.set("status", statuses.join(","));
    if (search) params.set("q", search);
    setList(null);
    setError(null);
    api<ExperimentList>("GET", `/v1/experiments?${params}`).then(setList, setError);
  }, [group, search]);

  // Back/forward changes the URL's q: the box follows it.
  useEffect(() => setSearchText(search), [search]);

  // The list route carries no metrics; ready ones are read one by one (the list is capped at 200).
  useEffect(() => {
    if (!list) return;
    for (const e of list.data.filter((x) => x.status === "ready" && !(x.experiment_id in details)).slice(0, 50)) {
      api<{ request: Record<string, unknown>; metrics: Record<string, { value: number | null }> | null }>(
        "GET",
        `/v1/experiments/${e.experiment_id}`,
      ).then(
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
        <h1>Experiments</h1>
        <Link to="/experiments/new" className="button">
          New experiment
        </Link>
      </div>
      <form role="search" className="row-form" onSubmit={submitSearch}>
        <label>
          Search
          <input
            type="search"
            value={searchText}
            maxLength={SEARCH_MAX}
            placeholder="name, description, file or label column"
            onChange={(e) => setSearchText(e.target.value)}
          />
        </label>
        <button type="submit" className="secondary">
          Search
        </button>
      </form>
      <div className="filters" role="group" aria-label="Filters">
        <label>
          Status
          <select value={group} onChange={(e) => setFilter("status", e.target.value)}>
            {STATUS_GROUPS.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Task
          <select value={task} onChange={(e) => setFilter("task", e.target.value)}>
            <option value="all">All</option>
            <option value="vision">Images (vision)</option>
            <option value="data">Tables (data)</option>
            <option value="detection">Detection</option>
          </select>
        </label>
      </div>
      <ErrorBox error={error} />
      {list === null && !error ? <p aria-busy="true">Loading…</p> : null}
      {list && rows.length === 0 ? (
        search ? (
          <p>No experiments match “{search}”.</p>
        ) : (
          <p>
            No experiments here yet. <Link to="/experiments/new">Upload a dataset and build a model</Link>.
          </p>
        )
      ) : null}
      {rows.length ? (
        <div className="table-wrap" tabIndex={0}>
          <table aria-label="Experiments" data-testid="experiments">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Study</th>
                <th scope="col">Metric</th>
                <th scope="col">Created</th>
                <th scope="col">Duration</th>
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
                        {e.task} · {e.type_of_experiment}
                      </div>
                    </td>
                    <td>
                      <StatusBadge status={e.status} />
                      {e.progress && !e.finished_at ? <span className="muted small"> {Math.round(e.progress.fraction * 100)}%</span> : null}
                    </td>
                    <td>{e.study_type}</td>
                    <td>{d?.value !== undefined && d.value !== null ? `${d.metric} ${d.value.toFixed(3)}` : "–"}</td>
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
