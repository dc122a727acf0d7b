import { useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../../api/typed";
import type { MonitoringReport } from "../../api/types";
import { currentLanguage } from "../../i18n";
import { formatDate } from "../../lib/format";
import { ErrorBox } from "../ui";

type Alert = MonitoringReport["alerts"]["items"][number];

/**
 * The report's alerts (docs/monitoring.md#alerts): those still open (or acknowledged) first, with a form to
 * acknowledge or resolve each, then those resolved in the period — by whom and when, or by Builder when the rule held
 * again over a whole window. Each alert reads in the page's language (the API gives both).
 */
export function AlertsList({
  experimentId,
  alerts,
  onChanged,
}: {
  experimentId: number;
  alerts: MonitoringReport["alerts"];
  onChanged: () => void;
}) {
  const { t } = useTranslation("monitoring");
  const open = alerts.items.filter((a) => a.state !== "resolved");
  const resolved = alerts.items.filter((a) => a.state === "resolved");
  return (
    <section className="card" aria-label={t("alerts.title")} data-testid="monitoring-alerts">
      <h3>{t("alerts.title")}</h3>
      <p className="small" data-testid="alerts-counts">
        {t("alerts.counts", { open: open.length, resolved: resolved.length })}
      </p>
      {alerts.items.length === 0 ? <p className="muted">{t("alerts.none")}</p> : null}
      {open.length ? (
        <>
          <h4>{t("alerts.openTitle")}</h4>
          <ul className="alerts" data-testid="alerts-open">
            {open.map((a) => (
              <AlertItem key={a.id} a={a} experimentId={experimentId} onChanged={onChanged} />
            ))}
          </ul>
        </>
      ) : null}
      {resolved.length ? (
        <>
          <h4>{t("alerts.resolvedTitle")}</h4>
          <ul className="alerts" data-testid="alerts-resolved">
            {resolved.map((a) => (
              <AlertItem key={a.id} a={a} experimentId={experimentId} onChanged={onChanged} />
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

function AlertItem({ a, experimentId, onChanged }: { a: Alert; experimentId: number; onChanged: () => void }) {
  const { t } = useTranslation("monitoring");
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const act = async (to: "acknowledge" | "resolve") => {
    setBusy(true);
    try {
      const path = { experiment_id: experimentId, alert_id: a.id };
      const text = comment.trim();
      if (to === "acknowledge")
        await call("post", "/v1/models/{experiment_id}/alerts/{alert_id}/acknowledge", { path, body: text ? { comment: text } : {} });
      else await call("post", "/v1/models/{experiment_id}/alerts/{alert_id}/resolve", { path, body: { comment: text } });
      setError(null);
      setComment("");
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const commentId = `alert-comment-${a.id}`;
  return (
    <li data-testid={`alert-${a.id}`} data-state={a.state}>
      <span className={`badge alert-${a.severity}`}>{t(`alerts.severity.${a.severity}`)}</span>{" "}
      <strong>{t(`alerts.rules.${a.rule}`)}</strong>
      <span className="muted small" data-testid="alert-state">
        {" "}
        · {t(`alerts.status.${a.state}`)} · {t("alerts.openedAt", { when: formatDate(a.opened_at) })}
      </span>
      <div className="small">{a.summary[currentLanguage()]}</div>
      {a.acknowledged_at ? (
        <div className="small" data-testid="alert-acknowledged">
          {t("alerts.acknowledgedBy", { who: a.acknowledged_by ?? t("alerts.someone"), when: formatDate(a.acknowledged_at) })}
        </div>
      ) : null}
      {a.resolved_at ? (
        <div className="small" data-testid="alert-resolved">
          {a.resolved_automatically
            ? t("alerts.resolvedAutomatically", { when: formatDate(a.resolved_at) })
            : t("alerts.resolvedBy", { who: a.resolved_by ?? t("alerts.someone"), when: formatDate(a.resolved_at) })}
        </div>
      ) : null}
      <ResolvedNotices deliveries={a.deliveries} />
      {a.comment ? <div className="small muted">“{a.comment}”</div> : null}
      {a.state !== "resolved" ? (
        <div className="alert-actions">
          <label htmlFor={commentId} className="small">
            {t("alerts.comment")}
          </label>
          <textarea id={commentId} rows={2} maxLength={2000} value={comment} onChange={(e) => setComment(e.target.value)} />
          <div className="buttons">
            {a.state === "open" ? (
              <button
                type="button"
                className="secondary"
                disabled={busy}
                onClick={() => void act("acknowledge")}
                data-testid="alert-acknowledge"
              >
                {t("alerts.acknowledge")}
              </button>
            ) : null}
            <button type="button" disabled={busy || !comment.trim()} onClick={() => void act("resolve")} data-testid="alert-resolve">
              {t("alerts.resolve")}
            </button>
          </div>
          <p className="muted small">{t("alerts.actionsNote")}</p>
          <ErrorBox error={error} />
        </div>
      ) : null}
    </li>
  );
}

/** Where the notice that an alert resolved by itself went, and whether it arrived (the same channels as its opening). */
function ResolvedNotices({ deliveries }: { deliveries: Alert["deliveries"] }) {
  const { t } = useTranslation("monitoring");
  const notices = deliveries.filter((d) => d.event === "resolved");
  if (!notices.length) return null;
  return (
    <div className="small muted" data-testid="alert-resolved-notices">
      {t("alerts.resolvedNotice", {
        list: notices
          .map((d) => t("alerts.noticeItem", { channel: t(`alerts.channel.${d.channel}`), state: t(`alerts.delivery.${d.state}`) }))
          .join(", "),
      })}
    </div>
  );
}
