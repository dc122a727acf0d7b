import { useTranslation } from "react-i18next";
import { formatDate } from "../../lib/format";

/** One alert as the report may carry it; every field optional, since the alerts' shape is not fixed here. */
interface AlertLike {
  id?: string | number;
  rule?: string;
  kind?: string;
  severity?: string;
  status?: string;
  message?: string;
  opened_at?: string;
  at?: string;
}

/**
 * The report's alerts, when it has any (issue 49 item 6 adds them to GET /monitoring): a plain list with their
 * severity, state, time and message. A report without an `alerts` array shows nothing.
 */
export function AlertsList({ alerts }: { alerts: unknown }) {
  const { t } = useTranslation("monitoring");
  if (!Array.isArray(alerts)) return null;
  const list = alerts.filter((a): a is AlertLike => !!a && typeof a === "object");
  return (
    <section className="card" aria-label={t("alerts.title")} data-testid="monitoring-alerts">
      <h3>{t("alerts.title")}</h3>
      {list.length === 0 ? (
        <p className="muted">{t("alerts.none")}</p>
      ) : (
        <ul className="alerts">
          {list.map((a, i) => (
            <li key={String(a.id ?? i)}>
              {a.severity ? (
                <span className={`badge sev-${a.severity}`}>{t(`severity.${a.severity}`, { defaultValue: a.severity })}</span>
              ) : null}{" "}
              <strong>{a.rule ?? a.kind ?? t("alerts.alert")}</strong>
              {a.status ? <span className="muted small"> · {t(`alerts.status.${a.status}`, { defaultValue: a.status })}</span> : null}
              {a.opened_at || a.at ? <span className="muted small"> · {formatDate(a.opened_at ?? a.at)}</span> : null}
              {a.message ? <div className="small">{a.message}</div> : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
