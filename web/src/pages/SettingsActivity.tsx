import { useEffect, useState } from "react";
import { api } from "../api/client";
import type { AuditPage } from "../api/types";
import { ErrorBox } from "../components/ui";
import { formatBytes, formatDate } from "../lib/format";

const PAGE = 50;

/** The audit log's action codes in words. A code this page does not know yet is shown as it is. */
const ACTION_WORDS: Record<string, string> = {
  sign_in: "Signed in to the dashboard",
  api_key_created: "Created an API key",
  api_key_revoked: "Revoked an API key",
  file_uploaded: "Uploaded a file",
  file_deleted: "Deleted a file",
  folder_deleted: "Deleted a folder",
  experiment_created: "Started an experiment",
  experiment_deleted: "Deleted an experiment",
  model_downloaded: "Downloaded a model",
  batch_scored: "Scored a file with a model",
  first_account_created: "Created the first account of this server",
  account_erasure_requested: "Asked for this account to be erased",
  account_erased: "Account erased",
  invitation_created: "Invited someone (link made)",
  invitation_used: "Joined with an invitation",
  invitation_revoked: "Withdrew an invitation",
  user_disabled: "Disabled a user",
  user_enabled: "Enabled a user",
  password_reset_issued: "Made a password-reset link",
  password_reset_used: "Set a new password with a reset link",
  role_changed: "Changed a user's role",
  operating_point_saved: "Saved an operating point (new model version)",
  model_version_restored: "Made an earlier model version current again",
};

const VIA_WORDS: Record<string, string> = {
  api_key: "API key",
  session: "Dashboard",
  cli: "Command line on the server",
  system: "Builder itself",
};

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
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<AuditPage | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    setPage(null);
    api<AuditPage>("GET", `/v1/audit?limit=${PAGE}&offset=${offset}`).then(setPage, setError);
  }, [offset]);

  return (
    <section>
      <h1>Activity</h1>
      <p>
        What was done with your account, newest first: sign-ins, keys, uploads, experiments, downloads and deletions. The log cannot be
        edited, and it is kept when data is erased; it holds no file or column names and no patient data.
      </p>
      <p>
        <a href="/v1/audit.csv" download data-testid="audit-csv">
          Download the whole log (CSV)
        </a>
      </p>
      <ErrorBox error={error} />
      {page === null ? (
        <p aria-busy="true">Loading…</p>
      ) : page.total === 0 ? (
        <p>Nothing recorded yet.</p>
      ) : (
        <>
          <div className="table-wrap" tabIndex={0}>
            <table aria-label="Activity" data-testid="audit">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">On</th>
                  <th scope="col">Through</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((e) => (
                  <tr key={e.seq}>
                    <td>{formatDate(e.at)}</td>
                    <td>{ACTION_WORDS[e.action] ?? e.action}</td>
                    <td>{e.target ?? "–"}</td>
                    <td>{VIA_WORDS[e.via] ?? e.via}</td>
                    <td className="details">{detailsText(e.details) || "–"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p className="pager">
            Entries {page.offset + 1}–{page.offset + page.data.length} of {page.total}.{" "}
            <button type="button" className="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Newer
            </button>{" "}
            <button type="button" className="secondary" disabled={!page.has_more} onClick={() => setOffset(offset + PAGE)}>
              Older
            </button>
          </p>
        </>
      )}
    </section>
  );
}
