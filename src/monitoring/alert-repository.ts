import { sql } from "drizzle-orm";
import type { Db } from "../db/client.js";

/** Monitoring alerts, their settings and their deliveries' outbox (migration monitoring-alerts). */

export type AlertState = "open" | "acknowledged" | "resolved";

export interface AlertRow {
  id: string;
  experimentUuid: string;
  experimentId: number;
  /** The experiment's builder; null once their account was erased (the experiment stayed with its workspace). */
  userId: string | null;
  rule: string;
  severity: string;
  state: AlertState;
  modelVersion: number | null;
  details: Record<string, unknown>;
  openedAt: Date;
  updatedAt: Date;
  acknowledgedAt: Date | null;
  resolvedAt: Date | null;
  comment: string | null;
  /** The e-mail of who acknowledged it, and of who resolved it (null when Builder did: resolvedAutomatically). */
  acknowledgedBy: string | null;
  resolvedBy: string | null;
  resolvedAutomatically: boolean;
}

export interface AlertSettingsRow {
  rules: unknown;
  webhookUrl: string | null;
  emailTo: string[];
}

export interface Destination {
  channel: "webhook" | "email";
  target: string;
}

/** What a delivery tells: the alert opened, or it resolved by itself (its rule held again). */
export type AlertEvent = "opened" | "resolved";

export interface DeliveryRow {
  id: string;
  alertId: string;
  event: AlertEvent;
  channel: "webhook" | "email";
  target: string;
  attempts: number;
}

/** An experiment with a model worth watching: its builder, workspace, number and current model. */
export interface WatchedExperiment {
  experimentUuid: string;
  userId: string | null;
  workspaceId: string;
  experimentId: number;
}

const rowsOf = <T>(r: unknown) => (r as { rows: T[] }).rows;

const ALERT_COLUMNS = sql`a.id, a.experiment_uuid as "experimentUuid", e.experiment_id as "experimentId", e.user_id as "userId",
  a.rule, a.severity, a.state, a.model_version as "modelVersion", a.details, a.created_at as "openedAt", a.updated_at as "updatedAt",
  a.acknowledged_at as "acknowledgedAt", a.resolved_at as "resolvedAt", a.comment,
  (select u.email from users u where u.id = a.acknowledged_by) as "acknowledgedBy",
  (select u.email from users u where u.id = a.resolved_by) as "resolvedBy", a.resolved_automatically as "resolvedAutomatically"`;

const asDate = (v: Date | string | null | undefined) => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(v));
const normalize = (r: AlertRow): AlertRow => ({
  ...r,
  openedAt: asDate(r.openedAt)!,
  updatedAt: asDate(r.updatedAt)!,
  acknowledgedAt: asDate(r.acknowledgedAt),
  resolvedAt: asDate(r.resolvedAt),
});

export class AlertRepository {
  constructor(private readonly db: Db) {}

  /** The workspace's experiment's row id by its number, or null when it is not the workspace's. */
  async experimentUuid(workspaceId: string, experimentId: number): Promise<string | null> {
    const r = await this.db.execute(
      sql`select id from experiments where workspace_id = ${workspaceId} and experiment_id = ${experimentId}`,
    );
    return rowsOf<{ id: string }>(r)[0]?.id ?? null;
  }

  async settings(experimentUuid: string): Promise<AlertSettingsRow | null> {
    const r = await this.db.execute(sql`
      select rules, webhook_url as "webhookUrl", email_to as "emailTo" from monitoring_alert_settings where experiment_uuid = ${experimentUuid}`);
    return rowsOf<AlertSettingsRow>(r)[0] ?? null;
  }

  async saveSettings(experimentUuid: string, s: AlertSettingsRow): Promise<void> {
    await this.db.execute(sql`
      insert into monitoring_alert_settings (experiment_uuid, rules, webhook_url, email_to, updated_at)
      values (${experimentUuid}, ${JSON.stringify(s.rules)}::jsonb, ${s.webhookUrl}, ${sql`array(select jsonb_array_elements_text(${JSON.stringify(s.emailTo)}::jsonb))`}, now())
      on conflict (experiment_uuid) do update set rules = excluded.rules, webhook_url = excluded.webhook_url,
        email_to = excluded.email_to, updated_at = now()`);
  }

  /** Experiments with a published model that served predictions since `since`, or that have alert settings. */
  async watched(since: Date): Promise<WatchedExperiment[]> {
    const r = await this.db.execute(sql`
      select e.id as "experimentUuid", e.user_id as "userId", e.workspace_id as "workspaceId", e.experiment_id as "experimentId" from experiments e
      where exists (select 1 from models m where m.experiment_uuid = e.id)
        and (exists (select 1 from monitoring_aggregates a where a.experiment_uuid = e.id and a.hour >= ${since.toISOString()}::timestamptz)
             or exists (select 1 from monitoring_alert_settings s where s.experiment_uuid = e.id))`);
    return rowsOf<WatchedExperiment>(r);
  }

  /** Predictions of the experiment in [from, to), from the hourly aggregates. */
  async predictions(experimentUuid: string, from: Date, to: Date): Promise<number> {
    const r = await this.db.execute(sql`
      select coalesce(sum(n), 0)::float8 as n from monitoring_aggregates
      where experiment_uuid = ${experimentUuid} and series = 'predictions'
        and hour >= ${from.toISOString()}::timestamptz and hour < ${to.toISOString()}::timestamptz`);
    return Number(rowsOf<{ n: number }>(r)[0]?.n ?? 0);
  }

  /**
   * Opens an alert at `at` (the evaluation's time) unless one for the same experiment and rule is not yet resolved
   * (the partial unique index makes this hold across replicas) or one was resolved less than `quietAfterResolveMs`
   * before `at`; in the same transaction its deliveries go into the outbox. Returns the new alert's id, or null.
   */
  async open(
    a: { experimentUuid: string; rule: string; severity: string; modelVersion: number; details: Record<string, unknown> },
    destinations: Destination[],
    quietAfterResolveMs: number,
    at: Date,
  ): Promise<string | null> {
    const when = sql`${at.toISOString()}::timestamptz`;
    return this.db.transaction(async (tx) => {
      const r = await tx.execute(sql`
        insert into monitoring_alerts (experiment_uuid, rule, severity, model_version, details, created_at, updated_at)
        select ${a.experimentUuid}, ${a.rule}, ${a.severity}, ${a.modelVersion}, ${JSON.stringify(a.details)}::jsonb, ${when}, ${when}
        where not exists (
          select 1 from monitoring_alerts r where r.experiment_uuid = ${a.experimentUuid} and r.rule = ${a.rule}
            and r.state = 'resolved' and r.resolved_at > ${when} - make_interval(secs => ${quietAfterResolveMs / 1000}))
        on conflict (experiment_uuid, rule) where state <> 'resolved' do nothing
        returning id`);
      const id = rowsOf<{ id: string }>(r)[0]?.id ?? null;
      if (id && destinations.length)
        await tx.execute(sql`
          insert into monitoring_alert_deliveries (alert_id, channel, target)
          select ${id}, x.channel, x.target from jsonb_to_recordset(${JSON.stringify(destinations)}::jsonb) as x(channel text, target text)
          on conflict do nothing`);
      return id;
    });
  }

  async list(experimentUuid: string, opts: { state?: AlertState; limit: number }): Promise<AlertRow[]> {
    const r = await this.db.execute(sql`
      select ${ALERT_COLUMNS} from monitoring_alerts a join experiments e on e.id = a.experiment_uuid
      where a.experiment_uuid = ${experimentUuid} ${opts.state ? sql`and a.state = ${opts.state}` : sql``}
      order by (a.state = 'resolved'), a.created_at desc limit ${opts.limit}`);
    return rowsOf<AlertRow>(r).map(normalize);
  }

  async byId(experimentUuid: string, id: string): Promise<AlertRow | null> {
    const r = await this.db.execute(sql`
      select ${ALERT_COLUMNS} from monitoring_alerts a join experiments e on e.id = a.experiment_uuid
      where a.experiment_uuid = ${experimentUuid} and a.id = ${id}`);
    const row = rowsOf<AlertRow>(r)[0];
    return row ? normalize(row) : null;
  }

  /** Acknowledges (only an open alert) or resolves (an open or acknowledged one); null when it was not in such a state. */
  async act(
    experimentUuid: string,
    id: string,
    to: "acknowledged" | "resolved",
    userId: string,
    comment: string | null,
  ): Promise<AlertRow | null> {
    const from = to === "acknowledged" ? sql`a.state = 'open'` : sql`a.state <> 'resolved'`;
    const stamp =
      to === "acknowledged" ? sql`acknowledged_at = now(), acknowledged_by = ${userId}` : sql`resolved_at = now(), resolved_by = ${userId}`;
    const r = await this.db.execute(sql`
      update monitoring_alerts a set state = ${to}, ${stamp}, updated_at = now(), acted_by = ${userId}, comment = ${comment}
      where a.experiment_uuid = ${experimentUuid} and a.id = ${id} and ${from}
      returning a.id`);
    if (!rowsOf(r).length) return null;
    return this.byId(experimentUuid, id);
  }

  /**
   * Resolves, as of `at`, the experiment's unresolved alerts of `rules` that were opened at or before `windowFrom`:
   * their rule held over a whole window judged after they opened. In the same transaction a "resolved" notice for
   * each goes into the outbox, to the destinations the opening went to now: once, since an alert resolves once (the
   * update takes only unresolved ones) and the outbox holds one row per alert, event, channel and target. Returns
   * those resolved (id and rule).
   */
  async resolveCleared(
    experimentUuid: string,
    rules: string[],
    windowFrom: Date,
    at: Date,
    destinations: Destination[] = [],
  ): Promise<Array<{ id: string; rule: string }>> {
    if (!rules.length) return [];
    return this.db.transaction(async (tx) => {
      const r = await tx.execute(sql`
        update monitoring_alerts set state = 'resolved', resolved_at = ${at.toISOString()}::timestamptz,
          updated_at = ${at.toISOString()}::timestamptz, resolved_automatically = true
        where experiment_uuid = ${experimentUuid} and state <> 'resolved'
          and rule in (select jsonb_array_elements_text(${JSON.stringify(rules)}::jsonb))
          and created_at <= ${windowFrom.toISOString()}::timestamptz
        returning id, rule`);
      const resolved = rowsOf<{ id: string; rule: string }>(r);
      if (resolved.length && destinations.length)
        await tx.execute(sql`
          insert into monitoring_alert_deliveries (alert_id, event, channel, target)
          select a.id::uuid, 'resolved', x.channel, x.target
          from jsonb_array_elements_text(${JSON.stringify(resolved.map((x) => x.id))}::jsonb) as a(id)
            cross join jsonb_to_recordset(${JSON.stringify(destinations)}::jsonb) as x(channel text, target text)
          on conflict do nothing`);
      return resolved;
    });
  }

  /** Leases up to `limit` due deliveries to `owner` for `leaseMs` (skip locked: each goes to one replica), counting the try. */
  async claim(owner: string, leaseMs: number, limit: number): Promise<DeliveryRow[]> {
    const r = await this.db.execute(sql`
      update monitoring_alert_deliveries d set lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
        attempts = d.attempts + 1
      where d.id in (
        select id from monitoring_alert_deliveries
        where state = 'pending' and next_at <= now() and (lease_until is null or lease_until < now())
        order by next_at limit ${limit} for update skip locked)
      returning d.id, d.alert_id as "alertId", d.event, d.channel, d.target, d.attempts`);
    return rowsOf<DeliveryRow>(r);
  }

  /** The alert a delivery carries, with its experiment's owner and number. */
  async alertOf(alertId: string): Promise<AlertRow | null> {
    const r = await this.db.execute(sql`
      select ${ALERT_COLUMNS} from monitoring_alerts a join experiments e on e.id = a.experiment_uuid where a.id = ${alertId}`);
    const row = rowsOf<AlertRow>(r)[0];
    return row ? normalize(row) : null;
  }

  /**
   * Records a try's outcome while `owner` still holds the lease: delivered (once: a row already delivered, or leased
   * to another replica since, is left alone), retried at `retryAt`, or failed for good. False when the lease was lost.
   */
  async settle(
    id: string,
    owner: string,
    outcome: { state: "delivered" | "pending" | "failed"; status?: number; error?: string; retryAt?: Date },
  ): Promise<boolean> {
    const r = await this.db.execute(sql`
      update monitoring_alert_deliveries set state = ${outcome.state}, last_status = ${outcome.status ?? null},
        last_error = ${outcome.error?.slice(0, 500) ?? null}, lease_owner = null, lease_until = null,
        delivered_at = ${outcome.state === "delivered" ? sql`now()` : sql`null`},
        next_at = ${outcome.retryAt ? sql`${outcome.retryAt.toISOString()}::timestamptz` : sql`next_at`}
      where id = ${id} and lease_owner = ${owner} and state = 'pending'
      returning id`);
    return rowsOf(r).length > 0;
  }

  /** Deliveries of an experiment's alerts, for the API: where each went and how. */
  async deliveries(
    alertIds: string[],
  ): Promise<Array<DeliveryRow & { state: string; lastStatus: number | null; lastError: string | null; deliveredAt: Date | null }>> {
    if (!alertIds.length) return [];
    const r = await this.db.execute(sql`
      select id, alert_id as "alertId", event, channel, target, attempts, state, last_status as "lastStatus", last_error as "lastError",
             delivered_at as "deliveredAt"
      from monitoring_alert_deliveries where alert_id in (select jsonb_array_elements_text(${JSON.stringify(alertIds)}::jsonb)::uuid)
      order by created_at`);
    return rowsOf<DeliveryRow & { state: string; lastStatus: number | null; lastError: string | null; deliveredAt: Date | null }>(r).map(
      (x) => ({ ...x, deliveredAt: asDate(x.deliveredAt) }),
    );
  }
}
