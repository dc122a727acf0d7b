import i18n from "i18next";

/** The locale numbers and dates are written in: the dashboard's language ("en" before i18n starts, as in unit tests). */
export function locale(): string {
  const lng = i18n.resolvedLanguage ?? i18n.language;
  return lng && lng !== "cimode" ? lng : "en";
}

/**
 * A string of the catalogs for code outside components (lib/ helpers); before i18n starts (unit tests) the English
 * given here, with its {{values}} filled in.
 */
export function tr(key: string, english: string, values: Record<string, string | number> = {}): string {
  if (i18n.isInitialized) return i18n.t(key, { defaultValue: english, ...values });
  return english.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(values[k] ?? ""));
}

/** A fixed number of decimals in the locale ("0.957", "0,957"); no grouping, like toFixed, so figures line up. */
function fixed(v: number, digits: number): string {
  return new Intl.NumberFormat(locale(), { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false }).format(v);
}

/** 1536 -> "1.5 KB"; decimal units, as disks and browsers show sizes. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : fixed(n, n < 10 ? 1 : 0)} ${units[i]}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const m = Math.floor(seconds / 60),
    s = Math.round(seconds % 60);
  if (m < 60) return `${m} min ${s} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleString(locale(), { dateStyle: "medium", timeStyle: "short" });
}

/** A day without its time (an API key's expiry is chosen as a day). */
export function formatDay(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toLocaleDateString(locale(), { dateStyle: "medium" });
}

export function formatNumber(v: number | null | undefined, digits = 3): string {
  return v === null || v === undefined || !Number.isFinite(v) ? "–" : fixed(v, digits);
}

/** An integer count in the locale, grouped ("12,480", "12.480"). */
export function formatCount(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? "–" : new Intl.NumberFormat(locale()).format(v);
}

/** A proportion as a percentage in the locale (0.123 -> "12.3%", "12,3 %"); minDigits < digits drops trailing zeros. */
export function formatPercent(v: number | null | undefined, digits = 1, minDigits = digits): string {
  return v === null || v === undefined || !Number.isFinite(v)
    ? "–"
    : new Intl.NumberFormat(locale(), { style: "percent", minimumFractionDigits: minDigits, maximumFractionDigits: digits }).format(v);
}

/** A proposed experiment_id: one more than the largest the user has, so it is new. */
export function proposeExperimentId(existing: number[]): number {
  return existing.length ? Math.max(...existing) + 1 : 1;
}

/** What the list and the experiment page call an experiment: its name, or its number when it has none. */
export function experimentTitle(e: { experiment_id: number; name?: string | null }): string {
  return e.name ?? tr("common:experimentNumber", "Experiment #{{id}}", { id: e.experiment_id });
}
