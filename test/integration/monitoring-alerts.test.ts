import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { signatureValid, startSmtpStandIn, startWebhookReceiver, until } from "../helpers/alert-receivers.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { storageEnv } from "../helpers/storage.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { fixtureRow, fixtureWithBaseline, predict } from "./monitoring-fixtures.js";

// Issue 49 item 6 on the serving fixture's table model: two replicas share one Postgres; ages shifted by 30 years
// break the drift rule; both replicas evaluate the rules twice at once, and one alert is recorded. Its webhook
// reaches a real HTTP receiver that answers 500 the first time: it is retried, signed as the experiment callbacks
// are, and recorded delivered once. Its e-mail reaches a local SMTP stand-in. It is acknowledged, then resolved
// with a comment, and each step is in the audit log. A detection model's drift answers "unchecked".

const SECRET = "alerts-test-secret-0123456789";

describe.skipIf(!process.env.TEST_DATABASE_URL || !haveFixturePython)("monitoring alerts on two replicas", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;
  let alice: UserWithKey;
  let modelDir: string;
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;

  const call = async (s: TestServer, method: string, p: string, body?: unknown) => {
    const res = await fetch(`${s.url}${p}`, {
      method,
      headers: bearer(alice.key, body === undefined ? {} : { "content-type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    hook = await startWebhookReceiver((n) => (n === 1 ? 500 : 200));
    smtp = await startSmtpStandIn();
    db = await createThrowawayDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-alerts-"));
    const env = {
      DATABASE_URL: db.url,
      BUILDER_DATA_DIR: dataDir,
      MONITORING_FLUSH_MS: "600000",
      CALLBACK_SECRET: SECRET,
      FETCH_ALLOW_HOSTS: "127.0.0.1",
      // The test runs the evaluation itself, on both replicas at once; both poll the outbox.
      ALERT_EVALUATE_MS: "0",
      ALERT_DELIVERY_POLL_MS: "200",
      ALERT_RETRY_BASE_MS: "300",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: "none",
      SMTP_FROM: "builder@hospital.example",
      ...(await storageEnv()),
    };
    a = await startTestServer("pglite", env);
    b = await startTestServer("pglite", env);
    alice = await createUserWithKey(a, { rateLimitPerMinute: 100_000 });
    modelDir = fixtureWithBaseline();
    await publishFixture(a, alice.userId, 7, modelDir);
    await publishFixture(a, alice.userId, 8, servingFixtures().modelDir("detection"));
  });
  afterAll(async () => {
    await a?.teardown().catch(() => {});
    await b?.teardown();
    await db?.drop();
    await hook?.close();
    await smtp?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (modelDir) fs.rmSync(modelDir, { recursive: true, force: true });
  });

  it("reads and changes a model's rules and destinations, refusing a bad address by field", async () => {
    const before = await call(a, "GET", "/v1/models/7/alert-rules");
    expect(before.status).toBe(200);
    expect(before.body.rules.drift).toEqual({ enabled: true, min_severity: "medium" });
    expect(before.body).toMatchObject({ webhook_url: null, email_to: [], delivery: { webhook_signing: true, email: true } });

    const bad = await call(a, "PUT", "/v1/models/7/alert-rules", { email_to: ["not-an-address"] });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.error.details)).toContain("email_to");

    const put = await call(a, "PUT", "/v1/models/7/alert-rules", {
      webhook_url: hook.url,
      email_to: ["ward-lead@hospital.example"],
      rules: { latency: { p95_ms: 1500 } },
    });
    expect(put.status).toBe(200);
    expect(put.body.rules.latency).toEqual({ enabled: true, p95_ms: 1500, min_predictions: 50 });
    expect(put.body.rules.drift.min_severity).toBe("medium"); // the rest stays at its default
    expect((await call(b, "GET", "/v1/models/7/alert-rules")).body.webhook_url).toBe(hook.url);
    expect((await call(a, "GET", "/v1/models/99/alert-rules")).status).toBe(404);
  });

  it("records one drift alert with both replicas evaluating twice, and delivers it once: webhook retried after a 500, e-mail", async () => {
    for (let i = 0; i < 120; i++) expect((await predict(i % 2 ? b : a, alice.key, 7, fixtureRow(i, 30))).status).toBe(201);
    await Promise.all([a.services.monitoring.recorder.flush(), b.services.monitoring.recorder.flush()]);

    const opened: number[] = [];
    for (let round = 0; round < 2; round++)
      opened.push(...(await Promise.all([a.services.monitoring.alerts.evaluate(), b.services.monitoring.alerts.evaluate()])));
    expect(opened.reduce((x, y) => x + y, 0)).toBe(1);

    await until(() => hook.received.some((r) => r.status === 200));
    await until(() => smtp.messages.length > 0);
    await new Promise((r) => setTimeout(r, 1500)); // both replicas keep polling: nothing more may arrive
    expect(hook.received.map((r) => r.status)).toEqual([500, 200]);
    const [first, second] = hook.received;
    expect(second.headers["x-builder-delivery"]).toBe(first.headers["x-builder-delivery"]);
    for (const r of hook.received) {
      expect(signatureValid(SECRET, r.headers["x-builder-signature"] as string, r.body)).toBe(true);
      expect(r.headers["x-builder-event"]).toBe("monitoring.alert_opened");
    }
    expect(signatureValid("another-secret-0123456789", second.headers["x-builder-signature"] as string, second.body)).toBe(false);
    const payload = JSON.parse(second.body);
    expect(payload.alert).toMatchObject({ experiment_id: 7, rule: "drift", model_version: 1 });
    expect(payload.alert.details.features[0].feature).toBe("age");
    expect(payload.alert.summary.es).toContain("Modelo 7");

    expect(smtp.messages).toHaveLength(1);
    const mail = smtp.messages[0];
    expect(mail).toMatchObject({ from: "builder@hospital.example", to: ["ward-lead@hospital.example"] });
    expect(mail.text).toContain("Modelo 7: los pacientes recientes no se parecen");
    expect(mail.text).toContain("Model 7: recent patients do not look like");

    const list = await call(b, "GET", "/v1/models/7/alerts");
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const alert = list.body.data[0];
    expect(alert).toMatchObject({ rule: "drift", state: "open", experiment_id: 7 });
    expect(["warning", "critical"]).toContain(alert.severity);
    const byChannel = Object.fromEntries(alert.deliveries.map((d: any) => [d.channel, d]));
    expect(byChannel.webhook).toMatchObject({ state: "delivered", attempts: 2, last_status: 200, target: hook.url });
    expect(byChannel.email).toMatchObject({ state: "delivered", attempts: 1 });

    const report = (await call(a, "GET", "/v1/models/7/monitoring")).body;
    expect(report.drift.status).toBe("drift");
    expect(report.alerts.open).toBe(1);
    expect(report.alerts.items[0].id).toBe(alert.id);
    expect(report.unfamiliar_inputs).toMatchObject({ checked: expect.any(Number), unfamiliar: expect.any(Number) });
  });

  it("is acknowledged, then resolved with a comment; each step is audited and a resolved rule stays quiet for a window", async () => {
    const [alert] = (await call(a, "GET", "/v1/models/7/alerts")).body.data;
    const ack = await call(a, "POST", `/v1/models/7/alerts/${alert.id}/acknowledge`, { comment: "looking at the lab's new analyser" });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ state: "acknowledged", comment: "looking at the lab's new analyser", acknowledged_by: alice.email });
    expect((await call(b, "POST", `/v1/models/7/alerts/${alert.id}/acknowledge`, {})).status).toBe(409);
    const noComment = await call(b, "POST", `/v1/models/7/alerts/${alert.id}/resolve`, { comment: "" });
    expect(noComment.status).toBe(400);
    const res = await call(b, "POST", `/v1/models/7/alerts/${alert.id}/resolve`, { comment: "ages were sent in months; fixed upstream" });
    expect(res.status).toBe(200);
    expect(res.body.state).toBe("resolved");
    expect(res.body.resolved_at).not.toBeNull();
    // Who acknowledged stays beside who resolved; a person's resolution is not an automatic one.
    expect(res.body).toMatchObject({ acknowledged_by: alice.email, resolved_by: alice.email, resolved_automatically: false });
    expect((await call(b, "POST", `/v1/models/7/alerts/${alert.id}/resolve`, { comment: "again" })).status).toBe(409);
    expect((await call(a, "POST", `/v1/models/7/alerts/00000000-0000-4000-8000-000000000000/resolve`, { comment: "x" })).status).toBe(404);

    // The same drift is still in the window, but the rule was just resolved: no new alert until a window has passed.
    expect(await a.services.monitoring.alerts.evaluate()).toBe(0);

    const audit = (await call(a, "GET", "/v1/audit?limit=100")).body.data as Array<{ action: string; details: any }>;
    const actions = audit.map((e) => e.action);
    expect(actions.filter((x) => x === "monitoring_alert_opened")).toHaveLength(1);
    expect(actions.filter((x) => x === "monitoring_alert_updated")).toHaveLength(2);
    expect(actions).toContain("monitoring_alert_rules_changed");
    // The comment itself is not copied into the audit log (it outlives erasure; people may write a name there).
    expect(JSON.stringify(audit)).not.toContain("fixed upstream");
  });

  it("sends a delivery whose replica died mid-try once its lease has run out, and records it delivered once", async () => {
    const before = hook.received.length;
    const rows = (r: unknown) => (r as { rows: any[] }).rows;
    const [exp] = rows(await a.services.db.execute(sql`select id from experiments where user_id = ${alice.userId} and experiment_id = 7`));
    const [alert] = rows(
      await a.services.db.execute(
        sql`insert into monitoring_alerts (experiment_uuid, rule, severity, model_version, details)
            values (${exp.id}, 'latency', 'warning', 1, '{"p95_ms_at_most": 5000, "p95_ms_threshold": 1500, "predictions": 120}'::jsonb) returning id`,
      ),
    );
    // As a replica killed after claiming it leaves it: leased to a process that is gone, one try counted, lease over.
    await a.services.db.execute(
      sql`insert into monitoring_alert_deliveries (alert_id, channel, target, attempts, lease_owner, lease_until)
          values (${alert.id}, 'webhook', ${hook.url}, 1, 'dead-replica', now() - interval '1 second')`,
    );
    await until(() => hook.received.length > before);
    await new Promise((r) => setTimeout(r, 1000));
    expect(hook.received.length).toBe(before + 1);
    const got = hook.received[before];
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body).alert).toMatchObject({ id: alert.id, rule: "latency" });
    const [d] = rows(
      await a.services.db.execute(sql`select state, attempts, lease_owner from monitoring_alert_deliveries where alert_id = ${alert.id}`),
    );
    expect(d).toEqual({ state: "delivered", attempts: 2, lease_owner: null });
  });

  it("answers drift 'unchecked' with a reason for a detection model", async () => {
    const r = await call(a, "GET", "/v1/models/8/monitoring");
    expect(r.status).toBe(200);
    expect(r.body.drift.status).toBe("unchecked");
    expect(r.body.drift.reason).toMatch(/detection/);
    expect(r.body.drift.features).toEqual([]);
  });
});
