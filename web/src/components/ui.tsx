import { useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { ApiFailure } from "../api/client";
import { formatNumber } from "../lib/format";
import { navigate } from "../lib/router";

/** Every API error as the page shows it: the message, its code, the fields, and the request id to quote. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  const { t } = useTranslation();
  if (!error) return null;
  const message = (error as { message?: unknown }).message;
  const text = typeof message === "string" ? message : typeof error === "string" ? error : JSON.stringify(error);
  const f = error instanceof ApiFailure ? error : new ApiFailure(0, "client_error", text, null);
  return (
    <div className="error" role="alert">
      <strong>{title ?? t("error")}:</strong> {f.message}
      {f.details.length > 0 && (
        <ul>
          {f.details.map((d, i) => (
            <li key={i}>
              {d.field ? <code>{d.field}</code> : null} {d.message}
            </li>
          ))}
        </ul>
      )}
      <div className="muted small">
        {f.status ? `HTTP ${f.status} · ` : ""}
        <code>{f.code}</code>
        {f.requestId ? (
          <>
            {" "}
            · {t("requestId")} <code data-testid="request-id">{f.requestId}</code>
          </>
        ) : null}
      </div>
    </div>
  );
}

export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a
      href={to}
      className={className}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const { t } = useTranslation();
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setState("copied");
        } catch {
          setState("failed");
        }
        setTimeout(() => setState("idle"), 2000);
      }}
    >
      {state === "copied" ? t("copy.copied") : state === "failed" ? t("copy.failed") : (label ?? t("copy.copy"))}
    </button>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const { t } = useTranslation();
  return <span className={`badge status-${status}`}>{t(`status.${status}`, { defaultValue: status.replace("_", " ") })}</span>;
}

export function Interval({ v }: { v: { value: number | null; ci_low: number | null; ci_high: number | null } | undefined }) {
  if (!v || v.value === null) return <span className="muted">–</span>;
  const ci = v.ci_low !== null && v.ci_high !== null ? ` (${formatNumber(v.ci_low)}–${formatNumber(v.ci_high)})` : "";
  return (
    <span>
      <strong>{formatNumber(v.value)}</strong>
      <span className="muted">{ci}</span>
    </span>
  );
}
