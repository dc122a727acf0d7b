import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerHealth } from "../../src/cli/worker-health.js";
import { SlotPool } from "../../src/jobs/gpu-slots.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// /metrics is not anonymous (issue 42, finding 6): with METRICS_TOKEN set it answers only to
// `Authorization: Bearer <token>`, on the API's port and on the worker's WORKER_PORT alike; without it, it is off.

const TOKEN = "a-metrics-token-for-the-test-0123456789";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("GET /metrics with METRICS_TOKEN set", () => {
  let server: TestServer;
  let worker: http.Server;
  let workerUrl: string;
  beforeAll(async () => {
    server = await startTestServer("pglite", { METRICS_TOKEN: TOKEN });
    worker = await startWorkerHealth(server.services, new SlotPool([]), 0);
    workerUrl = `http://127.0.0.1:${(worker.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => worker?.close(resolve));
    await server?.teardown();
  });

  for (const where of ["api", "worker"] as const) {
    const url = () => `${where === "api" ? server.url : workerUrl}/metrics`;

    it(`${where}: no token is 401 missing_metrics_token with a Bearer challenge, and no metrics in the body`, async () => {
      const res = await fetch(url());
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      const text = await res.text();
      expect(JSON.parse(text).error.code).toBe("missing_metrics_token");
      expect(text).not.toContain("builder_http_requests_total");
    });

    it(`${where}: a wrong token, an API key-like token or a token in another scheme is 401`, async () => {
      for (const headers of [
        bearer("not-the-token-at-all-0123456789"),
        bearer(`${TOKEN}x`),
        bearer(TOKEN.slice(0, -1)),
        { authorization: `Basic ${TOKEN}` },
      ]) {
        const res = await fetch(url(), { headers });
        expect(res.status, JSON.stringify(headers)).toBe(401);
        expect(((await res.json()) as any).error.code, JSON.stringify(headers)).toMatch(/^(invalid|missing)_metrics_token$/);
      }
      expect(((await (await fetch(url(), { headers: bearer("not-the-token-at-all-0123456789") })).json()) as any).error.code).toBe(
        "invalid_metrics_token",
      );
    });

    it(`${where}: the right token reads the Prometheus text`, async () => {
      const res = await fetch(url(), { headers: bearer(TOKEN) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      expect(await res.text()).toMatch(/^# HELP /m);
    });
  }

  it("api: the per-route counters are there for the scraper, and a refused scrape is counted too", async () => {
    await fetch(`${server.url}/metrics`);
    const text = await (await fetch(`${server.url}/metrics`, { headers: bearer(TOKEN) })).text();
    expect(text).toMatch(/builder_http_requests_total\{method="GET",route="\/metrics",status="401"\} \d+/);
  });
});

describe("GET /metrics without METRICS_TOKEN", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer("pglite");
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("is off (404), whatever the caller sends, even from loopback", async () => {
    for (const headers of [{}, bearer(TOKEN), { "x-forwarded-for": "127.0.0.1" }] as Record<string, string>[]) {
      const res = await fetch(`${server.url}/metrics`, { headers });
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(JSON.parse(text).error.message).toContain("METRICS_TOKEN");
      expect(text).not.toContain("# HELP");
    }
  });
});
