import type { ExperimentService } from "../experiments/service.js";
import type { Logger } from "../logger.js";
import type { Monitoring } from "../monitoring/index.js";
import type { ReportLanguage } from "./i18n.js";
import type { MonitoringResults } from "./model-card/section-monitoring.js";
import { renderModelCardPage } from "./model-card/page.js";
import type { Scope } from "../workspaces/scope.js";

const DAY_MS = 86_400_000;

export interface ModelCardPageDeps {
  experiments: Pick<ExperimentService, "modelCard">;
  monitoring: Pick<Monitoring, "report">;
  logger: Pick<Logger, "warn">;
  retentionDays: number;
}

/**
 * report.html: the experiment's model card (404 when not the caller's or not ready, as GET .../model-card) with its
 * Monitoring section's results over the retention period, rendered in `lang`. The card does not fail for want of
 * monitoring figures: the section then says they could not be read.
 */
export async function modelCardPage(deps: ModelCardPageDeps, scope: Scope, experimentId: number, lang: ReportLanguage) {
  const card = await deps.experiments.modelCard(scope, experimentId);
  const to = new Date();
  const from = new Date(to.getTime() - deps.retentionDays * DAY_MS);
  let monitoring: MonitoringResults;
  try {
    monitoring = { state: "ok", report: await deps.monitoring.report(scope, experimentId, from, to) };
  } catch (err) {
    deps.logger.warn({ err, experimentId }, "model card: the monitoring figures could not be read; the card says so");
    monitoring = { state: "unavailable" };
  }
  return renderModelCardPage({ card, lang, monitoring, retentionDays: deps.retentionDays });
}
