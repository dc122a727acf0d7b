import { actorOf, SYSTEM_ACTOR_ID, type AuditLog } from "../audit/audit-log.js";
import type { Config } from "../config.js";
import type { Db } from "../db/client.js";
import { ApiError, detail, errors, msg } from "../errors.js";
import type { CallbackSender } from "../jobs/callback.js";
import type { Logger } from "../logger.js";
import type { ModelRepository, ModelRow } from "../serving/model-repository.js";
import { AlertDelivery, type Mailer } from "./alert-delivery.js";
import { AlertRepository, type AlertRow, type AlertState, type Destination, type WatchedExperiment } from "./alert-repository.js";
import { ALERT_RULES, type AlertRules, type AlertRulesPatch, holdingRules, judgeRules, mergeRules } from "./alert-rules.js";
import { alertSummary } from "./alert-text.js";
import type { MonitoringReport } from "./report.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";
import type { AuthInfo } from "../auth/types.js";

/**
 * Alerts (issue 49 item 6, docs/monitoring.md#alerts): every ALERT_EVALUATE_MS each replica judges the rules of the
 * models that served lately over their window; a broken rule opens an alert unless one for the same model and rule
 * is still open or acknowledged, so an alert is recorded once, not on every window, whichever replica sees it first
 * (the database's partial unique index decides). The alert, its audit entry and its deliveries (webhook, e-mail) are
 * written then; AlertDelivery sends them. People acknowledge or resolve it with a comment. An alert also closes by
 * itself when its rule holds over a whole window that began after it opened (judged on enough data: silence is not
 * recovery). After either resolution the rule stays quiet for one window, so that what it judges next is new data.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Models are watched while they served within this long (the predictions-stopped rule looks a week back). */
const WATCH_DAYS = 8;
const MAX_LISTED = 200;

export interface AlertView {
  id: string;
  experiment_id: number;
  model_version: number | null;
  rule: string;
  severity: string;
  state: AlertState;
  opened_at: string;
  updated_at: string;
  acknowledged_at: string | null;
  resolved_at: string | null;
  comment: string | null;
  acknowledged_by: string | null;
  resolved_by: string | null;
  resolved_automatically: boolean;
  summary: { en: string; es: string };
  details: Record<string, unknown>;
  deliveries: Array<{
    /** opened: the alert's notice; resolved: the notice that it resolved by itself. */
    event: string;
    channel: string;
    target: string;
    state: string;
    attempts: number;
    last_status: number | null;
    delivered_at: string | null;
  }>;
}

export interface AlertSettingsView {
  rules: AlertRules;
  webhook_url: string | null;
  email_to: string[];
  /** Whether this server can deliver: webhooks need CALLBACK_SECRET, e-mail SMTP_HOST. */
  delivery: { webhook_signing: boolean; email: boolean };
}

type ReportFor = (model: ModelRow, experimentId: number, from: Date, to: Date) => Promise<MonitoringReport>;

export class AlertService {
  readonly repo: AlertRepository;
  readonly delivery: AlertDelivery;
  private timer?: NodeJS.Timeout;
  private evaluating?: Promise<number>;

  constructor(
    private readonly deps: {
      config: Config;
      db: Db;
      logger: Logger;
      models: ModelRepository;
      audit?: AuditLog;
      /** The monitoring report of a model over a period (Monitoring's, this replica's counts written first). */
      reportFor: ReportFor;
      send?: CallbackSender;
      mailer?: Mailer;
    },
  ) {
    this.repo = new AlertRepository(deps.db);
    this.delivery = new AlertDelivery({ repo: this.repo, config: deps.config, logger: deps.logger, send: deps.send, mailer: deps.mailer });
  }

  start(): void {
    this.delivery.start();
    const every = this.deps.config.ALERT_EVALUATE_MS;
    if (!every) return;
    const tick = () => {
      void this.evaluate()
        .catch((err) => this.deps.logger.warn({ err }, "alert rules could not be evaluated; tried again at the next round"))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, every).unref();
        });
    };
    this.timer = setTimeout(tick, every).unref();
  }

  /** One round over every watched model; returns how many alerts this replica opened. One round at a time here. */
  evaluate(now = new Date()): Promise<number> {
    return (this.evaluating ??= this.round(now).finally(() => (this.evaluating = undefined)));
  }

  private async round(now: Date): Promise<number> {
    let opened = 0;
    for (const e of await this.repo.watched(new Date(now.getTime() - WATCH_DAYS * DAY_MS))) {
      try {
        opened += await this.evaluateOne(e, now);
      } catch (err) {
        this.deps.logger.warn({ err, experiment_id: e.experimentId }, "a model's alert rules could not be evaluated");
      }
    }
    return opened;
  }

  private async evaluateOne(e: WatchedExperiment, now: Date): Promise<number> {
    const model = await this.deps.models.current(e.workspaceId, e.experimentId);
    if (!model) return 0;
    const settings = await this.repo.settings(e.experimentUuid);
    const rules = mergeRules(settings?.rules);
    const windowMs = rules.window_hours * HOUR_MS;
    const report = await this.deps.reportFor(model, e.experimentId, new Date(now.getTime() - windowMs), now);
    const quietFrom = new Date(now.getTime() - rules.predictions_stopped.quiet_hours * HOUR_MS);
    const traffic = {
      quiet: await this.repo.predictions(e.experimentUuid, quietFrom, now),
      before: await this.repo.predictions(e.experimentUuid, new Date(quietFrom.getTime() - 7 * DAY_MS), quietFrom),
    };
    const destinations: Destination[] = [
      ...(settings?.webhookUrl ? [{ channel: "webhook" as const, target: settings.webhookUrl }] : []),
      ...(settings?.emailTo ?? []).map((to) => ({ channel: "email" as const, target: to })),
    ];
    let opened = 0;
    for (const f of judgeRules(rules, report, traffic)) {
      const id = await this.repo.open(
        { experimentUuid: e.experimentUuid, rule: f.rule, severity: f.severity, modelVersion: model.version, details: f.details },
        destinations,
        windowMs,
        now,
      );
      if (!id) continue;
      opened++;
      this.deps.logger.info({ experiment_id: e.experimentId, alert_id: id, rule: f.rule, severity: f.severity }, "monitoring alert opened");
      await this.deps.audit?.record(
        { userId: e.userId ?? SYSTEM_ACTOR_ID, via: "system", workspaceId: e.workspaceId },
        "monitoring_alert_opened",
        `experiment ${e.experimentId}`,
        {
          alert_id: id,
          rule: f.rule,
          severity: f.severity,
          model_version: model.version,
        },
      );
    }
    // Alerts whose rule held over a whole window after they opened (the predictions-stopped rule's window is its quiet hours).
    const holding = holdingRules(rules, report, traffic);
    const windowFrom = new Date(now.getTime() - windowMs);
    // Each resolution is told where an opening would be, once (the outbox row is written with it).
    const cleared = [
      ...(await this.repo.resolveCleared(
        e.experimentUuid,
        holding.filter((r) => r !== "predictions_stopped"),
        windowFrom,
        now,
        destinations,
      )),
      ...(await this.repo.resolveCleared(
        e.experimentUuid,
        holding.filter((r) => r === "predictions_stopped"),
        quietFrom,
        now,
        destinations,
      )),
    ];
    for (const c of cleared) {
      this.deps.logger.info(
        { experiment_id: e.experimentId, alert_id: c.id, rule: c.rule },
        "monitoring alert resolved: its rule held again",
      );
      await this.deps.audit?.record(
        { userId: e.userId ?? SYSTEM_ACTOR_ID, via: "system", workspaceId: e.workspaceId },
        "monitoring_alert_updated",
        `experiment ${e.experimentId}`,
        {
          alert_id: c.id,
          rule: c.rule,
          state: "resolved",
          automatically: true,
          // Who is told (the channels, not the addresses: the log outlives a change of them).
          notified: {
            webhook: destinations.filter((d) => d.channel === "webhook").length,
            email: destinations.filter((d) => d.channel === "email").length,
          },
        },
      );
    }
    // Deliver at once rather than at the next poll.
    if (opened || (cleared.length && destinations.length))
      void this.delivery.runOnce().catch((err) => this.deps.logger.warn({ err }, "alert delivery failed; retried at the next poll"));
    return opened;
  }

  private async experimentUuid(scope: Scope, experimentId: number): Promise<string> {
    assertAllowed(scope.workspace, "experiment.read");
    const uuid = await this.repo.experimentUuid(scope.workspace.id, experimentId);
    if (!uuid) throw errors.notFound(msg("experiment.not_found", { id: experimentId }));
    return uuid;
  }

  private async views(rows: AlertRow[]): Promise<AlertView[]> {
    const deliveries = await this.repo.deliveries(rows.map((r) => r.id));
    return rows.map((a) => ({
      id: a.id,
      experiment_id: a.experimentId,
      model_version: a.modelVersion,
      rule: a.rule,
      severity: a.severity,
      state: a.state,
      opened_at: a.openedAt.toISOString(),
      updated_at: a.updatedAt.toISOString(),
      acknowledged_at: a.acknowledgedAt?.toISOString() ?? null,
      resolved_at: a.resolvedAt?.toISOString() ?? null,
      comment: a.comment,
      acknowledged_by: a.acknowledgedBy,
      resolved_by: a.resolvedBy,
      resolved_automatically: a.resolvedAutomatically,
      summary: { en: alertSummary(a, "en"), es: alertSummary(a, "es") },
      details: a.details,
      deliveries: deliveries
        .filter((d) => d.alertId === a.id)
        .map((d) => ({
          event: d.event,
          channel: d.channel,
          target: d.target,
          state: d.state,
          attempts: d.attempts,
          last_status: d.lastStatus,
          delivered_at: d.deliveredAt?.toISOString() ?? null,
        })),
    }));
  }

  /** The model's alerts, not yet resolved first, newest first. */
  async list(scope: Scope, experimentId: number, state?: AlertState): Promise<AlertView[]> {
    const uuid = await this.experimentUuid(scope, experimentId);
    return this.views(await this.repo.list(uuid, { state, limit: MAX_LISTED }));
  }

  /** For the monitoring report: those not yet resolved, and those opened in the period. */
  async forReport(experimentUuid: string, from: Date, to: Date): Promise<{ open: number; items: AlertView[] }> {
    const rows = (await this.repo.list(experimentUuid, { limit: MAX_LISTED })).filter(
      (a) => a.state !== "resolved" || (a.openedAt >= from && a.openedAt < to),
    );
    return { open: rows.filter((a) => a.state !== "resolved").length, items: await this.views(rows) };
  }

  async act(
    auth: AuthInfo,
    experimentId: number,
    id: string,
    to: "acknowledged" | "resolved",
    comment: string | undefined,
  ): Promise<AlertView> {
    const actor = actorOf(auth);
    const uuid = await this.experimentUuid(auth, experimentId);
    // Acting on an alert is the builders' care of the model they serve.
    assertAllowed(auth.workspace, "experiment.build");
    const row = await this.repo.act(uuid, id, to, actor.userId, comment ?? null);
    if (!row) {
      const now = await this.repo.byId(uuid, id);
      if (!now) throw errors.notFound(msg("monitoring.alert_not_found", { id }));
      throw new ApiError(409, "alert_state_conflict", msg("monitoring.alert_state", { state: now.state }));
    }
    // The comment is not copied into the audit log: people may name a patient there, and the log outlives erasure.
    await this.deps.audit?.record(actor, "monitoring_alert_updated", `experiment ${experimentId}`, {
      alert_id: id,
      rule: row.rule,
      state: to,
      comment_chars: comment?.length ?? 0,
    });
    return (await this.views([row]))[0];
  }

  async settings(scope: Scope, experimentId: number): Promise<AlertSettingsView> {
    const uuid = await this.experimentUuid(scope, experimentId);
    return this.settingsView(await this.repo.settings(uuid));
  }

  private settingsView(s: { rules: unknown; webhookUrl: string | null; emailTo: string[] } | null): AlertSettingsView {
    return {
      rules: mergeRules(s?.rules),
      webhook_url: s?.webhookUrl ?? null,
      email_to: s?.emailTo ?? [],
      delivery: { webhook_signing: !!this.deps.config.CALLBACK_SECRET, email: !!this.deps.config.SMTP_HOST },
    };
  }

  /** Changes part of the rules and, when given, where alerts go (null or [] stops that channel). */
  async saveSettings(
    auth: AuthInfo,
    experimentId: number,
    change: { rules?: AlertRulesPatch; webhook_url?: string | null; email_to?: string[] },
  ): Promise<AlertSettingsView> {
    const actor = actorOf(auth);
    const uuid = await this.experimentUuid(auth, experimentId);
    assertAllowed(auth.workspace, "experiment.build");
    if (change.webhook_url && !this.deps.config.CALLBACK_SECRET)
      throw errors.invalidRequest(msg("monitoring.webhooks_unsigned"), [detail("webhook_url", msg("monitoring.webhook_needs_secret"))]);
    if (change.email_to?.length && !this.deps.config.SMTP_HOST)
      throw errors.invalidRequest(msg("monitoring.email_unavailable"), [detail("email_to", msg("monitoring.email_needs_smtp"))]);
    const before = await this.repo.settings(uuid);
    // Only what differs from the defaults is kept, so a later change of a default reaches the rules nobody set.
    const stored = (before?.rules ?? {}) as Record<string, Record<string, unknown> | number>;
    for (const [k, v] of Object.entries(change.rules ?? {})) {
      if (v === undefined) continue;
      stored[k] = typeof v === "object" ? { ...(stored[k] as object | undefined), ...v } : v;
    }
    const next = {
      rules: stored,
      webhookUrl: change.webhook_url !== undefined ? change.webhook_url : (before?.webhookUrl ?? null),
      emailTo: change.email_to !== undefined ? [...new Set(change.email_to)] : (before?.emailTo ?? []),
    };
    await this.repo.saveSettings(uuid, next);
    await this.deps.audit?.record(actor, "monitoring_alert_rules_changed", `experiment ${experimentId}`, {
      rules: ALERT_RULES.filter((r) => change.rules?.[r] !== undefined),
      window_hours_changed: change.rules?.window_hours !== undefined,
      webhook: next.webhookUrl ? "set" : "none",
      emails: next.emailTo.length,
    });
    return this.settingsView(next);
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.evaluating?.catch(() => {});
    await this.delivery.close();
  }
}
