import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { signatureValid, startSmtpStandIn, startWebhookReceiver, until } from "../helpers/alert-receivers.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { fixtureWithBaseline, predict } from "./monitoring-fixtures.js";

// Issue 49 item 6: an alert closes by itself once its rule holds over a whole evaluation window that began after
// the alert opened, and only on enough data (an empty window proves nothing). The serving fixture's table model,
// a 1-hour window; the predictions are put into hours of the test's choosing by setting the recorder's clock, and
// the rules are judged at chosen times through evaluate(now). The fixture's hand-written baseline is not what its
// rows look like, so this test sends rows drawn from the baseline's own deciles and sets the baseline's score bins
// to what the model answers for them (read from a scratch copy of the model).
// Whoever was told of the alert is told once that it resolved: the same local webhook receiver and SMTP stand-in as
// the alert test's; the receiver answers the resolved notice's first try with 500, so it is retried, signed.

const SECRET = "auto-resolve-secret-0123456789";

const HOUR = 3_600_000;
const MIN = 60_000;

/** Age and bmi spread evenly over the fixture baseline's deciles (outer bins closed at plausible ends); shift adds to age. */
const AGE = [22, 30, 38, 45, 50, 55, 60, 65, 70, 78, 88];
const BMI = [17, 20, 22, 24, 25, 26, 27, 29, 31, 34, 38];
function baselineRow(i: number, shift: number): number[] {
  const bin = i % 10;
  const at = (Math.floor(i / 10) + 0.5) / 12;
  const within = (e: number[]) => e[bin] + (e[bin + 1] - e[bin]) * at;
  return [within(AGE) + shift, Math.floor(i / 10) % 2, within(BMI), i % 3];
}

describe.skipIf(!haveFixturePython)("an alert resolved by itself when its rule holds again", () => {
  let s: TestServer;
  let alice: UserWithKey;
  let modelDir: string;
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
  // Two days back, on an hour: every hour the test uses is in the past, so no real traffic mixes in.
  const T0 = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR;

  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${s.url}${p}`, {
      method,
      headers: bearer(alice.key, body === undefined ? {} : { "content-type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** The recorder's clock is a constructor option (deps.now); the test server does not expose it, so it is set here. */
  const recordAt = async (at: number, shift: number, experimentId = 3) => {
    (s.services.monitoring.recorder as unknown as { deps: { now?: () => number } }).deps.now = () => at;
    for (let i = 0; i < 120; i++) expect((await predict(s, alice.key, experimentId, baselineRow(i, shift))).status).toBe(201);
    await s.services.monitoring.recorder.flush();
  };
  const evaluateAt = (at: number) => s.services.monitoring.alerts.evaluate(new Date(at));
  const driftAlert = async () => (await call("GET", "/v1/models/3/alerts")).body.data.find((x: any) => x.rule === "drift");

  beforeAll(async () => {
    hook = await startWebhookReceiver((n) => (n === 2 ? 500 : 200)); // 1: the opening; 2: the resolved notice's first try
    smtp = await startSmtpStandIn();
    s = await startTestServer("pglite", {
      MONITORING_FLUSH_MS: "600000",
      ALERT_EVALUATE_MS: "0",
      CALLBACK_SECRET: SECRET,
      FETCH_ALLOW_HOSTS: "127.0.0.1",
      ALERT_DELIVERY_POLL_MS: "200",
      ALERT_RETRY_BASE_MS: "300",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: "none",
      SMTP_FROM: "builder@hospital.example",
    });
    alice = await createUserWithKey(s, { rateLimitPerMinute: 100_000 });
    modelDir = fixtureWithBaseline();
    await publishFixture(s, alice.userId, 4, modelDir);
    await recordAt(T0 - 24 * HOUR, 0, 4);
    const scratch = await s.services.monitoring.report(alice.scope, 4, new Date(T0 - 25 * HOUR), new Date(T0 - 23 * HOUR));
    const manifestPath = path.join(modelDir, "manifest.json");
    const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
    manifest.monitoring_baseline.score.counts = scratch.score_distribution.window.map((c: number) => c * 10);
    fs.writeFileSync(manifestPath, JSON.stringify(manifest));
    await publishFixture(s, alice.userId, 3, modelDir);
    const destinations = { webhook_url: hook.url, email_to: ["ward@hospital.example"] };
    expect((await call("PUT", "/v1/models/3/alert-rules", { rules: { window_hours: 1 }, ...destinations })).status).toBe(200);
  });
  afterAll(async () => {
    await s?.teardown();
    await hook?.close();
    await smtp?.close();
    if (modelDir) fs.rmSync(modelDir, { recursive: true, force: true });
  });

  it("stays open over an empty window and a window begun before it opened, then resolves (when, by nobody) after a whole window like the baseline", async () => {
    await recordAt(T0 + 5 * MIN, 30); // ages 30 years older than the baseline's
    expect(await evaluateAt(T0 + 30 * MIN)).toBe(1);
    const opened = await driftAlert();
    expect(opened).toMatchObject({ state: "open", opened_at: new Date(T0 + 30 * MIN).toISOString(), resolved_automatically: false });
    await until(() => hook.received.length === 1 && smtp.messages.length === 1); // the opening, told
    expect(JSON.parse(hook.received[0].body).event).toBe("monitoring.alert_opened");
    expect((await call("POST", `/v1/models/3/alerts/${opened.id}/acknowledge`, {})).body).toMatchObject({
      state: "acknowledged",
      acknowledged_by: alice.email,
    });

    // The next window holds no prediction at all: nothing says the drift went away, so the alert stays.
    await evaluateAt(T0 + HOUR + 50 * MIN);
    expect((await driftAlert()).state).toBe("acknowledged");

    // Patients like the baseline's in the next hour. Judged over a window that began before the alert opened, they
    // do not close it (that window is not wholly new data); over the next whole window after it, they do.
    await recordAt(T0 + HOUR + 5 * MIN, 0);
    expect(await evaluateAt(T0 + HOUR + 20 * MIN)).toBe(0);
    expect((await driftAlert()).state).toBe("acknowledged");
    expect(await evaluateAt(T0 + HOUR + 40 * MIN)).toBe(0);
    const closed = await driftAlert();
    expect(closed).toMatchObject({
      state: "resolved",
      resolved_at: new Date(T0 + HOUR + 40 * MIN).toISOString(),
      resolved_automatically: true,
      resolved_by: null,
      acknowledged_by: alice.email,
    });
    const audit = (await call("GET", "/v1/audit?limit=50")).body.data as Array<{ action: string; via: string; details: any }>;
    expect(audit.find((e) => e.action === "monitoring_alert_updated" && e.details.automatically)).toMatchObject({
      via: "system",
      details: { alert_id: opened.id, rule: "drift", state: "resolved", notified: { webhook: 1, email: 1 } },
    });

    // Told that it resolved, on the opening's channels: the webhook retried after a 500 (same delivery id, signed),
    // the e-mail once. Judging the rules again (still holding) tells nobody a second time.
    await until(() => hook.received.length === 3 && smtp.messages.length === 2);
    const [, failed, delivered] = hook.received;
    expect([failed.status, delivered.status]).toEqual([500, 200]);
    expect(failed.headers["x-builder-delivery"]).toBe(delivered.headers["x-builder-delivery"]);
    expect(delivered.headers["x-builder-event"]).toBe("monitoring.alert_resolved");
    expect(signatureValid(SECRET, delivered.headers["x-builder-signature"] as string, delivered.body)).toBe(true);
    expect(JSON.parse(delivered.body)).toMatchObject({
      event: "monitoring.alert_resolved",
      alert: { id: opened.id, rule: "drift", state: "resolved", resolved_automatically: true, resolved_at: closed.resolved_at },
    });
    expect(smtp.messages[1].to).toEqual(["ward@hospital.example"]);
    // The subject is MIME-encoded (RFC 2047, UTF-8 base64): decoded here.
    const subject = smtp.messages[1].subject.replace(/=\?UTF-8\?B\?([^?]*)\?=/g, (_, b: string) =>
      Buffer.from(b, "base64").toString("utf8"),
    );
    expect(subject).toContain("Resuelta: ");
    expect(subject).toContain("Resolved: ");
    expect(smtp.messages[1].text).toContain("Alert resolved by itself");
    expect(smtp.messages[1].text).toContain("Alerta resuelta sola");
    await evaluateAt(T0 + HOUR + 50 * MIN);
    await s.services.monitoring.alerts.delivery.runOnce();
    expect(hook.received).toHaveLength(3);
    expect(smtp.messages).toHaveLength(2);
    // The alert list shows where the notice went and that it arrived.
    const listed = await driftAlert();
    expect(
      listed.deliveries
        .filter((d: any) => d.event === "resolved")
        .map((d: any) => [d.channel, d.state])
        .sort(),
    ).toEqual([
      ["email", "delivered"],
      ["webhook", "delivered"],
    ]);

    // Ages shifted again: the rule stays quiet for one window after the resolution, then opens anew.
    await recordAt(T0 + 2 * HOUR + 5 * MIN, 30);
    expect(await evaluateAt(T0 + 2 * HOUR + 10 * MIN)).toBe(0);
    await recordAt(T0 + 3 * HOUR + 5 * MIN, 30);
    expect(await evaluateAt(T0 + 3 * HOUR + 30 * MIN)).toBe(1);
  });
});
