import { afterAll, beforeAll, expect, it } from "vitest";
import { bearer, createUserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const METRICS_TOKEN = "http-basics-metrics-token";

describeEachTarget("HTTP basics on %s", (target) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(target, { METRICS_TOKEN });
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("answers health and readiness with the database kind", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    const body = (await ready.json()) as {
      status: string;
      database: string;
      runner: string;
      devices: Array<{ device: string; gpu: unknown; threads: number; busy: boolean }>;
    };
    expect([body.status, body.database, body.runner]).toEqual(["ready", target, "inprocess"]);
    // The in-process runner's slots: one per GPU, or one CPU slot on a host without (this one, unless it has a GPU).
    expect(body.devices.length).toBeGreaterThanOrEqual(1);
    for (const d of body.devices)
      expect([d.device, d.gpu === null, d.threads >= 1, d.busy]).toEqual([d.gpu === null ? "cpu" : "cuda", d.gpu === null, true, false]);
  });

  it("gives every response a request id, echoing a sane incoming one", async () => {
    const res = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "abc-123" } });
    expect(res.headers.get("x-request-id")).toBe("abc-123");
    const generated = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "bad id with spaces" } });
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers unknown routes 404 in the one error shape, with no stack trace", async () => {
    const res = await fetch(`${server.url}/v1/nothing-here`);
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toEqual({ error: { code: "not_found", message: expect.any(String), type: "not_found_error" } });
  });

  it("refuses malformed JSON with 400 invalid_json", async () => {
    // Bodies are read only after authentication, so the malformed one goes to the one route open to all: sign-in.
    const res = await fetch(`${server.url}/v1/session`, { method: "POST", headers: { "content-type": "application/json" }, body: "{bad" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe("invalid_json");
  });

  it("answers 405 with Allow for a known path and another method (found by the fuzzer)", async () => {
    const res = await fetch(`${server.url}/v1/me`, { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("DELETE, GET, HEAD");
    expect(((await res.json()) as any).error.code).toBe("method_not_allowed");
    expect((await fetch(`${server.url}/v1/experiments/7/cancel`, { method: "GET" })).headers.get("allow")).toBe("POST");
  });

  it("refuses a NUL character anywhere in a JSON body with 400, not a database 500 (found by the fuzzer)", async () => {
    // Bodies are read after authentication: a signed-in dashboard session for the key routes, a key for /predict.
    const user = await createUserWithKey(server);
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    const session = {
      cookie: (signIn.headers.get("set-cookie") ?? "").split(";")[0],
      "x-csrf-token": ((await signIn.json()) as { csrf_token: string }).csrf_token,
    };
    const post = (body: string) =>
      fetch(`${server.url}/v1/api-keys`, { method: "POST", headers: { "content-type": "application/json", ...session }, body });
    for (const body of ['{"name": "a\\u0000b"}', '{"a\\u0000": 1}', '{"x": [{"y": "\\u0000"}]}', '{"name": "\\\\\\u0000"}']) {
      const res = await post(body);
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as any).error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("NUL") });
    }
    // A literal backslash before "u0000" is no NUL (the search counts the backslashes before each match).
    const literal = await post('{"name": "a\\\\u0000b"}');
    expect(literal.status).toBe(201);
    expect(((await literal.json()) as any).name).toBe("a\\u0000b");
    // Invalid JSON stays invalid_json even with a NUL in it, as it was.
    expect(((await (await post('{"name": "\\u0000"')).json()) as any).error.code).toBe("invalid_json");
    const predict = await fetch(`${server.url}/predict`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(user.key) },
      body: '{"message": "\\u0000"}',
    });
    expect((await predict.json()) as any).toMatchObject({ error: 1, code: "invalid_request" });
  });

  it("serves OpenAPI 3.1 and Prometheus metrics with per-route counts", async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.paths["/readyz"].get.summary).toMatch(/Readiness/);
    const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(metrics).toMatch(/builder_http_requests_total\{method="GET",route="\/readyz",status="200"\} \d+/);
  });
});
