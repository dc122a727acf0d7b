import { useEffect, useState } from "react";
import { tr } from "./format";

// The "about N left" of a running build. The pipelines estimate the time left from the trials so far, and trials
// differ a lot (a logistic regression takes a second, a boosted model a minute), so their raw estimate jumps up and
// down between events ("2 min" -> "40 s" -> "3 min"), which reads as the build going backwards. The page shows a
// steadier figure: the previous one counted down by the time since, moved a third of the way toward each new estimate.

export interface ShownEta {
  seconds: number;
  atMs: number;
}

const PULL = 1 / 3;

export function steadyEta(previous: ShownEta | null, reportedS: number, nowMs: number): ShownEta {
  if (previous === null || !Number.isFinite(previous.seconds)) return { seconds: reportedS, atMs: nowMs };
  const countdown = previous.seconds - (nowMs - previous.atMs) / 1000;
  // Past its own countdown the old figure says nothing: take the new estimate as it is.
  if (countdown <= 0) return { seconds: reportedS, atMs: nowMs };
  return { seconds: Math.max(0, countdown + PULL * (reportedS - countdown)), atMs: nowMs };
}

/** Coarse on purpose: an estimate shown to the second claims a precision it does not have. */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 15) return tr("common:aFewSeconds", "a few seconds");
  if (seconds < 60) return `${Math.round(seconds / 10) * 10} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  const m = Math.round(seconds / 60);
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** The steady figure for a page that receives the pipeline's estimates one event at a time (null: none yet). */
export function useSteadyEta(reportedS: number | null | undefined): ShownEta | null {
  const [shown, setShown] = useState<ShownEta | null>(null);
  useEffect(() => {
    if (reportedS === null || reportedS === undefined || !Number.isFinite(reportedS)) return setShown(null);
    setShown((previous) => steadyEta(previous, reportedS, Date.now()));
  }, [reportedS]);
  return shown;
}
