import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { call } from "../api/typed";
import type { AuditPage } from "../api/types";
import { ErrorBox } from "../components/ui";
import { formatBytes, formatDate } from "../lib/format";

const PAGE = 50;

/**
 * The details as short "name: value" pairs: sizes readable, hashes shortened, and internal ids (UUIDs a person cannot
 * match to anything on the page; the "On" column already names the key or experiment) left out. The CSV keeps all.
 */
function detailsText(details: Record<string, unknown>): string {
  return Object.entries(details)
    .filter(([k]) => !k.endsWith("_id"))
    .map(([k, v]) => {
      if (k === "size" && typeof v === "number") return `size: ${formatBytes(v)}`;
      if (k === "sha256" && typeof v === "string") return `SHA-256: ${v.slice(0, 12)}…`;
      return `${k.replace(/_/g, " ")}: ${typeof v === "string" ? v : JSON.stringify(v)}`;
    })
    .join(" · ");
}

/** Settings → Activity: the user's own audit log (GET /v1/audit), newest first, and the whole of it as CSV. */
export function ActivityPage() {
  const { t } = useTranslation("settings");
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<AuditPage | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    setPage(null);
    call("get", "/v1/audit", { query: { limit: PAGE, offset } }).then(setPage, setError);
  }, [offset]);

  return (
    <section>
      <h1>{t("activity.title")}</h1>
      <p>{t("activity.intro")}</p>
      <p>
        <a href="/v1/audit.csv" download data-testid="audit-csv">
          {t("activity.download")}
        </a>
      </p>
      <ErrorBox error={error} />
      {page === null ? (
        <p aria-busy="true">{t("common:loading")}</p>
      ) : page.total === 0 ? (
        <p>{t("activity.nothing")}</p>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0}>
            <table aria-label={t("activity.title")} data-testid="audit">
              <thead>
                <tr>
                  <th scope="col">{t("activity.when")}</th>
                  <th scope="col">{t("activity.what")}</th>
                  <th scope="col">{t("activity.on")}</th>
                  <th scope="col">{t("activity.through")}</th>
                  <th scope="col">{t("activity.details")}</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((e) => (
                  <tr key={e.seq}>
                    <td>{formatDate(e.at)}</td>
                    <td>
                      {
                        /* a code the catalog does not know yet is shown as it is */ t(`activity.action.${e.action}`, {
                          defaultValue: e.action,
                        })
                      }
                    </td>
                    <td>{e.target ?? "–"}</td>
                    <td>{t(`activity.via.${e.via}`, { defaultValue: e.via })}</td>
                    <td className="details">{detailsText(e.details) || "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p className="pager">
            {t("activity.entries", { from: page.offset + 1, to: page.offset + page.data.length, total: page.total })}{" "}
            <button type="button" className="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              {t("activity.newer")}
            </button>{" "}
            <button type="button" className="secondary" disabled={!page.has_more} onClick={() => setOffset(offset + PAGE)}>
              {t("activity.older")}
            </button>
          </p>
        </>
      )}
    </section>
  );
}
