import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { signatureValid, startWebhookReceiver, until } from "../helpers/alert-receivers.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { storageEnv } from "../helpers/storage.js";
import { api } from "./experiments-fixtures.js";
import { buildPimaModel, havePimaRows, pimaRows } from "./pima-model.js";

// Issue 49's "done when", the alert part, through the real pipeline: a Pima model is built, two replicas serve
// predictions whose glucose is 30 mg/dL above the patients', and both replicas run the alert evaluation twice at
// the same time. One drift alert is recorded, and it reaches a local webhook receiver (a real HTTP server) exactly
// once with a valid signature, after a first try the receiver answered with 500.

vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const SECRET = "pima-alerts-secret-0123456789";

describe.skipIf(!process.env.TEST_DATABASE_URL || !havePimaRows)("a drift alert on a Pima model, two replicas", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;
  let user: UserWithKey;
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const rows = pimaRows();

  beforeAll(async () => {
    hook = await startWebhookReceiver((n) => (n === 1 ? 500 : 200));
    db = await createThrowawayDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-alerts-pima-"));
    const env = {
      DATABASE_URL: db.url,
      BUILDER_DATA_DIR: dataDir,
      MONITORING_FLUSH_MS: "500",
      CALLBACK_SECRET: SECRET,
      FETCH_ALLOW_HOSTS: "127.0.0.1",
      ALERT_EVALUATE_MS: "0",
      ALERT_DELIVERY_POLL_MS: "200",
      ALERT_RETRY_BASE_MS: "300",
      ...(await storageEnv()),
    };
    a = await startTestServer("pglite", env);
    b = await startTestServer("pglite", env);
    user = await createUserWithKey(a, { rateLimitPerMinute: 100_000 });
    await buildPimaModel(a, user, rows);
  });
  afterAll(async () => {
    await a?.teardown().catch(() => {});
    await b?.teardown();
    await db?.drop();
    await hook?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("records one drift alert on glucose and delivers it to the webhook exactly once, retried after a 500", async () => {
    const put = await fetch(`${a.url}/v1/models/1/alert-rules`, {
      method: "PUT",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
      body: JSON.stringify({ webhook_url: hook.url }),
    });
    expect(put.status).toBe(200);
    for (let start = 0; start < 1200; start += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, k) => {
          const i = start + k;
          const message = rows[i % rows.length].slice(0, 8);
          message[1] += 30;
          const res = await fetch(`${(i % 2 ? b : a).url}/v1/experiments/1/predict`, {
            method: "POST",
            headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
            body: JSON.stringify({ message }),
          });
          expect(res.status).toBe(201);
          await res.arrayBuffer();
        }),
      );
    }
    await Promise.all([a.services.monitoring.recorder.flush(), b.services.monitoring.recorder.flush()]);

    const opened: number[] = [];
    for (let round = 0; round < 2; round++)
      opened.push(...(await Promise.all([a.services.monitoring.alerts.evaluate(), b.services.monitoring.alerts.evaluate()])));
    expect(opened.reduce((x, y) => x + y, 0)).toBe(1);

    await until(() => hook.received.some((r) => r.status === 200), 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(hook.received.map((r) => r.status)).toEqual([500, 200]);
    expect(new Set(hook.received.map((r) => r.headers["x-builder-delivery"])).size).toBe(1);
    for (const r of hook.received) expect(signatureValid(SECRET, r.headers["x-builder-signature"] as string, r.body)).toBe(true);
    const payload = JSON.parse(hook.received[1].body);
    expect(payload.alert).toMatchObject({ experiment_id: 1, rule: "drift" });
    const features = payload.alert.details.features.map((f: { feature: string }) => f.feature);
    expect(features[0]).toBe("Glucose");
    expect(features).not.toContain("Age");

    // Every answer was looked at by the unfamiliar-input check and counted in the hourly aggregates.
    const report = (await api(a.url, user.key).get("/v1/models/1/monitoring")).body;
    expect(report.unfamiliar_inputs.checked + report.unfamiliar_inputs.unchecked).toBe(1200);
    expect(report.unfamiliar_inputs.checked).toBe(1200);
    expect(report.alerts.open).toBe(1);

    const alerts = (await api(b.url, user.key).get("/v1/models/1/alerts")).body.data;
    expect(alerts).toHaveLength(1);
    expect(alerts[0].deliveries).toEqual([expect.objectContaining({ channel: "webhook", state: "delivered", attempts: 2 })]);
  });
});
