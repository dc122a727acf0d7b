import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Config } from "../config.js";
import { type CallbackSender, guardedSender, signCallback } from "../jobs/callback.js";
import type { Logger } from "../logger.js";
import { type SmtpMessage, sendMail, SmtpError } from "../net/smtp.js";
import type { AlertEvent, AlertRepository, AlertRow, DeliveryRow } from "./alert-repository.js";
import { alertSummary, alertWords, ruleTitle, severityWord, type Lang } from "./alert-text.js";

/**
 * Sends alerts from the outbox (monitoring_alert_deliveries): every replica polls, claims due rows under a lease
 * (skip locked, so each row goes to one replica at a time), tries each once, and records the outcome only while it
 * holds the lease. A failed try waits ALERT_RETRY_BASE_MS, doubled each time, up to ALERT_DELIVERY_ATTEMPTS.
 *
 * Webhooks are signed as the experiment callbacks are (signCallback, CALLBACK_SECRET) and carry the delivery's id in
 * x-builder-delivery, the same on every retry: a process killed after the receiver answered but before the outcome
 * was written sends again after the lease, and the receiver tells the repeat by that id. The outcome itself is
 * recorded once.
 */

/** A try that has not settled within this long is the replica's death: another takes the row over. */
const LEASE_MS = 120_000;
/** Deliveries claimed per poll. */
const BATCH = 10;

export type Mailer = (msg: SmtpMessage) => Promise<void>;

export function smtpMailer(config: Config): Mailer | undefined {
  if (!config.SMTP_HOST || !config.SMTP_FROM) return undefined;
  const settings = {
    host: config.SMTP_HOST,
    port: config.SMTP_PORT,
    security: config.SMTP_SECURITY,
    from: config.SMTP_FROM,
    user: config.SMTP_USER,
    password: config.SMTP_PASSWORD,
  };
  return (msg) => sendMail(settings, msg);
}

/** The webhook's event name for what a delivery tells. */
export const WEBHOOK_EVENTS: Record<AlertEvent, string> = {
  opened: "monitoring.alert_opened",
  resolved: "monitoring.alert_resolved",
};

/**
 * The webhook's body: the alert in figures and in words, with where to read it. A "resolved" notice carries the same
 * alert (its summary says what was wrong) with its state, when it resolved and that nobody had to.
 */
export function webhookPayload(a: AlertRow, event: AlertEvent = "opened") {
  return {
    event: WEBHOOK_EVENTS[event],
    alert: {
      id: a.id,
      experiment_id: a.experimentId,
      model_version: a.modelVersion,
      rule: a.rule,
      severity: a.severity,
      opened_at: a.openedAt.toISOString(),
      ...(event === "resolved"
        ? { state: a.state, resolved_at: a.resolvedAt?.toISOString() ?? null, resolved_automatically: a.resolvedAutomatically }
        : {}),
      summary: { en: alertSummary(a, "en"), es: alertSummary(a, "es") },
      details: a.details,
      url: `/v1/models/${a.experimentId}/alerts/${a.id}`,
    },
    user_id: a.userId,
  };
}

/** The e-mail's subject: Spanish first, then English, as the body. */
function subjectOf(a: AlertRow, title: (lang: Lang) => string): string {
  const model = (lang: Lang) => alertWords(lang, "alertText.modelLower", { id: a.experimentId });
  return `[Builder] ${title("es")} / ${title("en")} — ${model("es")} / ${model("en")}`;
}

/** The e-mail saying an alert resolved by itself: its rule held again over a whole window of new predictions. */
function resolvedMailOf(a: AlertRow, to: string, deliveryId: string): SmtpMessage {
  const when = a.resolvedAt?.toISOString() ?? "?";
  const opened = a.openedAt.toISOString();
  const version = a.modelVersion ?? "?";
  const body = (lang: Lang) => [
    alertWords(lang, "alertText.mail.resolvedBySelf", { when }),
    alertWords(lang, "alertText.mail.whatItSaid", { summary: alertSummary(a, lang) }),
    alertWords(lang, "alertText.mail.openedLine", { opened, version }),
  ];
  return {
    to: [to],
    subject: subjectOf(a, (lang) => alertWords(lang, "alertText.mail.resolvedSubject", { title: ruleTitle(a.rule, lang) })),
    headers: { "Message-ID": `<${deliveryId}@builder.alerts>` },
    text: [...body("es"), "", "—", "", ...body("en")].join("\n"),
  };
}

function mailOf(a: AlertRow, to: string, deliveryId: string): SmtpMessage {
  const opened = a.openedAt.toISOString();
  const version = a.modelVersion ?? "?";
  const body = (lang: Lang) => [
    alertSummary(a, lang),
    "",
    alertWords(lang, "alertText.mail.severityLine", { severity: severityWord(a.severity, lang), opened, version }),
    alertWords(lang, "alertText.mail.howToAct"),
    `POST /v1/models/${a.experimentId}/alerts/${a.id}/acknowledge`,
  ];
  return {
    to: [to],
    subject: subjectOf(a, (lang) => ruleTitle(a.rule, lang)),
    headers: { "Message-ID": `<${deliveryId}@builder.alerts>` },
    text: [...body("es"), "", "—", "", ...body("en")].join("\n"),
  };
}

type TryOutcome = { ok: true; status?: number } | { ok: false; permanent: boolean; status?: number; error: string };

export class AlertDelivery {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly deps: {
      repo: AlertRepository;
      config: Config;
      logger: Logger;
      /** Tests may swap the webhook sender; production goes through the outbound guard. */
      send?: CallbackSender;
      mailer?: Mailer;
    },
  ) {}

  start(): void {
    const every = this.deps.config.ALERT_DELIVERY_POLL_MS;
    if (!every) return;
    const tick = () => {
      void this.runOnce()
        .catch((err) => this.deps.logger.warn({ err }, "alert deliveries could not be read; tried again shortly"))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, every).unref();
        });
    };
    this.timer = setTimeout(tick, every).unref();
  }

  /** One poll: claims what is due and tries each; one poll at a time in this process. */
  runOnce(): Promise<void> {
    return (this.running ??= this.poll().finally(() => (this.running = undefined)));
  }

  private async poll(): Promise<void> {
    for (;;) {
      const due = await this.deps.repo.claim(this.owner, LEASE_MS, BATCH);
      if (!due.length) return;
      await Promise.all(due.map((d) => this.deliver(d)));
    }
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    const alert = await this.deps.repo.alertOf(d.alertId);
    if (!alert) return; // deleted with its experiment: the row went by cascade
    const outcome = d.channel === "webhook" ? await this.webhook(d, alert) : await this.email(d, alert);
    const { config, repo, logger } = this.deps;
    let settled: boolean;
    if (outcome.ok) settled = await repo.settle(d.id, this.owner, { state: "delivered", status: outcome.status });
    else {
      const last = outcome.permanent || d.attempts >= config.ALERT_DELIVERY_ATTEMPTS;
      const retryAt = new Date(Date.now() + config.ALERT_RETRY_BASE_MS * 2 ** (d.attempts - 1));
      settled = await repo.settle(d.id, this.owner, {
        state: last ? "failed" : "pending",
        status: outcome.status,
        error: outcome.error,
        retryAt: last ? undefined : retryAt,
      });
      logger.warn(
        {
          alert_id: d.alertId,
          delivery_id: d.id,
          channel: d.channel,
          attempt: d.attempts,
          status: outcome.status,
          err: outcome.error,
          final: last,
        },
        last ? "alert not delivered; no more tries" : "alert not delivered; tried again later",
      );
    }
    if (!settled)
      logger.warn({ delivery_id: d.id }, "an alert delivery's lease ran out before its outcome was written; another replica retries it");
  }

  private async webhook(d: DeliveryRow, a: AlertRow): Promise<TryOutcome> {
    const secret = this.deps.config.CALLBACK_SECRET;
    if (!secret) return { ok: false, permanent: true, error: "CALLBACK_SECRET is not set: webhooks cannot be signed" };
    const body = JSON.stringify(webhookPayload(a, d.event));
    try {
      const send = this.deps.send ?? guardedSender(this.deps.config);
      const res = await send(d.target, {
        body,
        timeoutMs: 10_000,
        headers: {
          "content-type": "application/json",
          "x-builder-signature": signCallback(secret, body),
          "x-builder-event": WEBHOOK_EVENTS[d.event],
          "x-builder-delivery": d.id,
        },
      });
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
      // As the callbacks: a 4xx other than 429 is the receiver's final word.
      return { ok: false, permanent: res.status < 500 && res.status !== 429, status: res.status, error: `HTTP ${res.status}` };
    } catch (err) {
      return { ok: false, permanent: false, error: (err as Error).message };
    }
  }

  private async email(d: DeliveryRow, a: AlertRow): Promise<TryOutcome> {
    const mailer = this.deps.mailer ?? smtpMailer(this.deps.config);
    if (!mailer) return { ok: false, permanent: true, error: "SMTP_HOST is not set: e-mail cannot be sent" };
    try {
      await mailer(d.event === "resolved" ? resolvedMailOf(a, d.target, d.id) : mailOf(a, d.target, d.id));
      return { ok: true };
    } catch (err) {
      return {
        ok: false,
        permanent: err instanceof SmtpError && err.permanent,
        status: (err as SmtpError).code,
        error: (err as Error).message,
      };
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }
}
