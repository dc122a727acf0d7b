import { useCallback, useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { Operations, OperationsWorker } from "../api/types";
import { ErrorBox, StatusBadge } from "../components/ui";
import { formatDate, formatDuration } from "../lib/format";

/** How often the page asks again: workers beat every 2 s, so a drain shows within a refresh or two. */
const REFRESH_MS = 3000;

const STATE_CLASS: Record<string, string> = {
  active: "status-ready",
  draining: "status-ready-warned",
  drained: "status-cancelled",
  lost: "status-failed",
  stopped: "status-cancelled",
};

type JobRef = { experiment_id: number; owner_email: string | null };

/** Operations, for administrators: where training jobs run, what each worker can run, the queues, and what runs now. */
export function OperationsPage() {
  const { t } = useTranslation("operations");
  const [view, setView] = useState<Operations | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setView(await call("get", "/v1/admin/workers"));
      setError(null);
    } catch (err) {
      setError(err);
    }
  }, []);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  const act = async (w: OperationsWorker, action: "drain" | "resume") => {
    setBusy(w.id);
    try {
      await (action === "drain"
        ? call("post", "/v1/admin/workers/{id}/drain", { path: { id: w.id } })
        : call("post", "/v1/admin/workers/{id}/resume", { path: { id: w.id } }));
      await load();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const job = (ref: JobRef | null) =>
    ref ? t("job", { id: ref.experiment_id, owner: ref.owner_email ?? t("ownerGone") }) : t("jobUnknown");
  /** Seconds between the worker's last heartbeat and the server's answer (both server clocks: no skew with this browser). */
  const ago = (w: OperationsWorker) => formatDuration(Math.max(0, (Date.parse(view!.checked_at) - Date.parse(w.heartbeat_at)) / 1000));
  const gpuWorkersTakingJobs = view?.workers.some((w) => w.status === "active" && w.queues.includes("gpu")) ?? false;
  const gpuWaiting = view?.queues.find((q) => q.need === "gpu")?.waiting ?? 0;

  return (
    <section>
      <h1>{t("title")}</h1>
      <p>{t("intro")}</p>
      <ErrorBox error={error} />
      {view === null ? (
        <p aria-busy="true">{t("common:loading")}</p>
      ) : (
        <>
          <p className="note" data-testid="runner">
            {view.runner === "bullmq" ? t("runner.bullmq") : t("runner.inprocess")}
          </p>
          <h2>{t("queues.title")}</h2>
          <div className="grid2" data-testid="queues">
            {view.queues.map((q) => (
              <div className="card queue-card" key={q.need} data-testid={`queue-${q.need}`}>
                <h3>{t(`queues.${q.need}`)}</h3>
                <p>
                  <strong>{t("queues.waiting", { count: q.waiting })}</strong> · {t("queues.active", { count: q.active })}
                </p>
              </div>
            ))}
          </div>
          {gpuWaiting > 0 && !gpuWorkersTakingJobs ? (
            <p className="verdict verdict-severe" role="status">
              {t("queues.noGpuWorker", { count: gpuWaiting })}
            </p>
          ) : null}

          <h2>{t("workers.title")}</h2>
          {view.workers.length === 0 ? (
            <p className="muted">{t("workers.none")}</p>
          ) : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label={t("workers.title")} data-testid="workers">
                <thead>
                  <tr>
                    <th scope="col">{t("workers.worker")}</th>
                    <th scope="col">{t("workers.state")}</th>
                    <th scope="col">{t("workers.gpus")}</th>
                    <th scope="col">{t("workers.slots")}</th>
                    <th scope="col">{t("workers.heartbeat")}</th>
                    {view.runner === "bullmq" ? <th scope="col">{t("workers.actions")}</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {view.workers.map((w) => (
                    <tr
                      key={w.id}
                      className={w.status === "lost" || w.status === "stopped" ? "revoked" : undefined}
                      data-testid={`worker-${w.pid}`}
                    >
                      <td>
                        {w.host} <span className="muted small">{t("workers.process", { pid: w.pid })}</span>
                        <br />
                        <code className="small">{w.id}</code>
                      </td>
                      <td>
                        <span className={`badge ${STATE_CLASS[w.status] ?? ""}`}>{t(`state.${w.status}`)}</span>
                        {w.drain_requested && w.status === "active" ? (
                          <span className="muted small"> {t("workers.drainAsked")}</span>
                        ) : null}
                      </td>
                      <td>
                        {w.gpus.length === 0
                          ? t("workers.noGpu")
                          : w.gpus.map((g) => (
                              <div key={g.index}>
                                {t("workers.gpu", { index: g.index, name: g.name })}
                                {g.memory_mib ? `, ${t("workers.memory", { gib: Math.round(g.memory_mib / 1024) })}` : ""}
                                {g.simulated ? <span className="muted small"> {t("workers.simulated")}</span> : null}
                              </div>
                            ))}
                      </td>
                      <td>
                        <ul className="slot-list">
                          {w.slots.map((s) => (
                            <li key={s.slot}>
                              {s.device === "cuda" ? t("slot.gpu", { index: s.gpu_index }) : t("slot.cpu")}:{" "}
                              {s.busy ? <strong>{job(s.job)}</strong> : <span className="muted">{t("slot.free")}</span>}
                            </li>
                          ))}
                        </ul>
                      </td>
                      <td>{t("workers.ago", { time: ago(w) })}</td>
                      {view.runner === "bullmq" ? (
                        <td>
                          {w.status === "active" && !w.drain_requested ? (
                            <button
                              type="button"
                              className="secondary"
                              disabled={busy === w.id}
                              onClick={() => act(w, "drain")}
                              aria-label={t("workers.drainLabel", { host: w.host, pid: w.pid })}
                            >
                              {t("workers.drain")}
                            </button>
                          ) : w.drain_requested && w.status !== "lost" && w.status !== "stopped" ? (
                            <button
                              type="button"
                              className="secondary"
                              disabled={busy === w.id}
                              onClick={() => act(w, "resume")}
                              aria-label={t("workers.resumeLabel", { host: w.host, pid: w.pid })}
                            >
                              {t("workers.resume")}
                            </button>
                          ) : null}
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <p className="muted small">{view.runner === "bullmq" ? t("workers.footer") : t("workers.footerInprocess")}</p>

          <h2>{t("running.title")}</h2>
          {view.running.length === 0 ? (
            <p className="muted">{t("running.none")}</p>
          ) : (
            <div className="table-wrap" tabIndex={0}>
              <table aria-label={t("running.title")} data-testid="running">
                <thead>
                  <tr>
                    <th scope="col">{t("running.experiment")}</th>
                    <th scope="col">{t("running.kind")}</th>
                    <th scope="col">{t("running.stage")}</th>
                    <th scope="col">{t("running.where")}</th>
                    <th scope="col">{t("running.since")}</th>
                  </tr>
                </thead>
                <tbody>
                  {view.running.map((r) => {
                    const worker = view.workers.find((w) => w.id === r.worker);
                    const slot = r.device === null ? t("running.noSlot") : r.device === "cuda" ? t("slot.gpuShort") : t("slot.cpu");
                    return (
                      <tr key={`${r.worker}-${r.experiment_id}-${r.owner_email}`}>
                        <td>{job(r)}</td>
                        <td>{t(`kind.${r.kind}`, { defaultValue: r.kind })}</td>
                        <td>
                          <StatusBadge status={r.status} />
                          {r.attempt > 1 ? <span className="muted small"> {t("running.attempt", { n: r.attempt })}</span> : null}
                        </td>
                        <td>
                          {worker ? t("running.on", { host: worker.host, pid: worker.pid }) : r.worker} · {slot}
                        </td>
                        <td>{formatDate(r.since)}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
