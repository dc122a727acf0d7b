import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import express from "express";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { experiments } from "../../src/db/schema.js";
import { dashboardRouter } from "../../src/http/dashboard.js";
import { MAX_MESSAGE_VALUES } from "../../src/http/json-request-body.js";
import { bearer, createUserWithKey, type UserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { fixtureRequest } from "../fixtures/serving/publish.js";

// Issue 42. Finding 1: both /predict paths (the node:http lane and Express) and every other JSON route
// authenticate and count the rate limit from the headers before reading the body, and cap what a body can make
// JSON.parse build. Finding 7: the dashboard's static files, /docs and the plain-text log carry the security
// headers. Finding 8: a body whose Content-Encoding does not decode is a 400, not a 500.

/** The plain /predict requests go to the lane (src/http/predict-lane.ts); these forms go to Express. */
const PREDICT_PATHS = [
  ["the lane, canonical path", "/v1/experiments/1/predict"],
  ["the lane, seed path", "/predict"],
  ["Express, seed path with a query", "/predict?experiment_id=1"],
  ["Express, canonical path with a trailing slash", "/v1/experiments/1/predict/"],
] as const;

const json = { "content-type": "application/json" };
/** A prediction body for experiment 1 on any of PREDICT_PATHS (the bare seed path names it in the body). */
const predictBody = (urlPath: string, message: unknown) =>
  JSON.stringify(urlPath === "/predict" ? { message, experiment_id: 1 } : { message });

describe("issue 42: the HTTP edge", () => {
  let server: TestServer;
  let user: UserWithKey;
  let port: number;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { FETCH_MAX_BYTES: "200000" });
    user = await createUserWithKey(server);
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => server?.teardown());

  /**
   * Sends the headers and the start of a body that never completes. Timing-free: the answer can only arrive if
   * the server decided from the headers; a server that reads the body first never answers (the test times out).
   * The announced length is within every route's body limit, so that only reading the body can make it wait.
   */
  function answerBeforeBody(
    method: string,
    urlPath: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: "127.0.0.1",
        port,
        method,
        path: urlPath,
        headers: { ...json, "content-length": "100000", ...headers },
      });
      req.on("response", (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => {
          req.destroy();
          resolve({ status: res.statusCode!, body: JSON.parse(text), headers: res.headers });
        });
      });
      req.on("error", reject);
      req.write('{"message":[0,0,0,0,');
    });
  }

  describe("finding 1: no body is read before authentication", () => {
    it.each(PREDICT_PATHS)(
      "%s: no API key is a 401 in the seed's contract while the body is still arriving",
      { timeout: 10_000 },
      async (_name, urlPath) => {
        const r = await answerBeforeBody("POST", urlPath, {});
        expect(r.status).toBe(401);
        expect(r.body).toMatchObject({ error: 1, code: "missing_api_key" });
      },
    );

    it.each(PREDICT_PATHS)("%s: an invalid key is a 401 while the body is still arriving", { timeout: 10_000 }, async (_name, urlPath) => {
      const r = await answerBeforeBody("POST", urlPath, bearer("bld_not_a_key"));
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: 1, code: "invalid_api_key" });
    });

    it.each(PREDICT_PATHS)(
      "%s: a key over its rate limit is a 429 with Retry-After while the body is still arriving",
      { timeout: 10_000 },
      async (_name, urlPath) => {
        const limited = await createUserWithKey(server, { rateLimitPerMinute: 1 });
        const first = await fetch(`${server.url}${urlPath}`, {
          method: "POST",
          headers: { ...json, ...bearer(limited.key) },
          body: predictBody(urlPath, [1]),
        });
        expect(first.status).toBe(404); // experiment 1 is not this user's; the request counted all the same
        const r = await answerBeforeBody("POST", urlPath, bearer(limited.key));
        expect(r.status).toBe(429);
        expect(r.body).toMatchObject({ error: 1, code: "rate_limit_exceeded" });
        expect(r.headers["retry-after"]).toMatch(/^\d+$/);
        expect(r.headers["x-ratelimit-remaining-requests"]).toBe("0");
      },
    );

    it.each([
      ["POST", "/v1/experiments", "missing_api_key"],
      ["POST", "/v1/api-keys", "session_required"],
      ["POST", "/v1/datasets/validate", "missing_api_key"],
    ])("%s %s (another JSON route) is a 401 while the body is still arriving", { timeout: 10_000 }, async (method, urlPath, code) => {
      const r = await answerBeforeBody(method, urlPath, {});
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe(code);
    });

    const post = (urlPath: string, body: string) =>
      fetch(`${server.url}${urlPath}`, { method: "POST", headers: { ...json, ...bearer(user.key) }, body });
    const row = (urlPath: string, n: number) => predictBody(urlPath, new Array(n).fill(0));

    it.each(PREDICT_PATHS)("%s: a body of more values than a message may hold is refused before it is parsed", async (_name, urlPath) => {
      for (const body of [row(urlPath, MAX_MESSAGE_VALUES + 100), `{"message":${"[".repeat(20_000)}${"]".repeat(20_000)}}`]) {
        const res = await post(urlPath, body);
        expect(res.status).toBe(413);
        expect(await res.json()).toMatchObject({ error: 1, code: "too_many_values" });
      }
    });

    it.each(PREDICT_PATHS)(`%s: message holds at most ${MAX_MESSAGE_VALUES} values; that many reach the model`, async (_name, urlPath) => {
      const over = await post(urlPath, row(urlPath, MAX_MESSAGE_VALUES + 1));
      expect(over.status).toBe(400);
      expect(await over.json()).toMatchObject({
        error: 1,
        code: "invalid_request",
        details: [expect.objectContaining({ field: "message" })],
      });
      const most = await post(urlPath, row(urlPath, MAX_MESSAGE_VALUES));
      expect(most.status).toBe(404); // past validation: the handler looked for experiment 1, which this user lacks
      expect(await most.json()).toMatchObject({ error: 1, code: "not_found" });
    });
  });

  it("the body reader keeps express.json's charset rules: UTF-16 is decoded, Latin-1 refused with 415", async () => {
    const signIn = (contentType: string, body: Buffer) =>
      fetch(`${server.url}/v1/session`, { method: "POST", headers: { "content-type": contentType }, body });
    const credentials = JSON.stringify({ email: user.email, password: user.password });
    expect((await signIn("application/json; charset=utf-16le", Buffer.from(credentials, "utf16le"))).status).toBe(200);
    const latin1 = await signIn("application/json; charset=latin1", Buffer.from(credentials, "latin1"));
    expect(latin1.status).toBe(415);
    expect(((await latin1.json()) as any).error.code).toBe("unsupported_encoding");
  });

  describe("finding 8: a body whose Content-Encoding does not decode is 400 invalid_body_encoding", () => {
    const payload = JSON.stringify({ message: [1, 2, 3] });
    const bodies: Array<[string, string, Buffer]> = [
      ["truncated gzip", "gzip", gzipSync(payload).subarray(0, 12)],
      ["bad deflate", "deflate", Buffer.from("this is not deflate data")],
      ["bad br", "br", Buffer.concat([Buffer.from([0xff, 0xff, 0xff]), brotliCompressSync(payload)])],
    ];
    const send = (urlPath: string, encoding: string, body: Buffer, headers: Record<string, string>) =>
      fetch(`${server.url}${urlPath}`, { method: "POST", headers: { ...json, "content-encoding": encoding, ...headers }, body });

    it.each(bodies)("%s on the predict paths, in the seed's contract", async (_name, encoding, body) => {
      for (const [, urlPath] of PREDICT_PATHS) {
        const res = await send(urlPath, encoding, body, bearer(user.key));
        expect(res.status, urlPath).toBe(400);
        expect(await res.json()).toMatchObject({ error: 1, code: "invalid_body_encoding", type: "invalid_request_error" });
      }
    });

    it.each(bodies)("%s on a JSON route, signed in or not", async (_name, encoding, body) => {
      for (const [urlPath, headers] of [
        ["/v1/experiments", bearer(user.key)],
        ["/v1/session", {}],
      ] as const) {
        const res = await send(urlPath, encoding, body, headers);
        expect(res.status, urlPath).toBe(400);
        expect(((await res.json()) as any).error).toMatchObject({
          code: "invalid_body_encoding",
          message: expect.stringContaining(encoding),
        });
      }
    });

    it("is logged at info, never as an error", async () => {
      // Every request's lines go through services.logger.child (app.ts and the lane): capture them for this test.
      const lines: Array<{ level: number; msg: string }> = [];
      const capture = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const child = vi.spyOn(server.services.logger, "child").mockImplementation((bindings) => capture.child(bindings));
      try {
        for (const [, urlPath] of PREDICT_PATHS) expect((await send(urlPath, "gzip", bodies[0][2], bearer(user.key))).status).toBe(400);
        expect((await send("/v1/session", "br", bodies[2][2], {})).status).toBe(400);
      } finally {
        child.mockRestore();
      }
      expect(lines.filter((l) => l.msg.includes("does not decode"))).toHaveLength(PREDICT_PATHS.length + 1);
      expect(
        lines.every((l) => l.level === 30),
        JSON.stringify(lines),
      ).toBe(true);
    });

    it("a body that does decode still works (deflate)", async () => {
      const res = await send("/v1/session", "deflate", deflateSync(JSON.stringify({ email: user.email, password: user.password })), {});
      expect(res.status).toBe(200);
    });
  });

  describe("finding 7: what a browser renders carries the security headers", () => {
    function expectPageHeaders(res: Response, what: string) {
      expect(res.headers.get("content-security-policy"), what).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy"), what).toContain("default-src 'self'");
      expect(res.headers.get("x-frame-options"), what).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
    }

    it("/docs, with its own inline script allowed by hash and no other", async () => {
      const res = await fetch(`${server.url}/docs`);
      expect(res.status).toBe(200);
      expectPageHeaders(res, "/docs");
      expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
      const scriptSrc = res.headers
        .get("content-security-policy")!
        .split("; ")
        .find((d) => d.startsWith("script-src"));
      expect(scriptSrc).not.toContain("unsafe-inline");
      // A browser hashes the script element's whole text: the hash must be of exactly what the page carries.
      const scripts = [...(await res.text()).matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
      expect(scripts).toHaveLength(1);
      expect(scriptSrc).toBe(`script-src 'self' 'sha256-${createHash("sha256").update(scripts[0]).digest("base64")}'`);
    });

    it("the plain-text job log", async () => {
      await server.services.db.insert(experiments).values({
        userId: user.userId,
        workspaceId: await personalWorkspaceId(server.services.db, user.userId),
        experimentId: 5,
        request: fixtureRequest(user.userId, 5),
        requestHash: "fixture-5",
        status: "queued",
      });
      const res = await fetch(`${server.url}/v1/experiments/5/logs`, { headers: bearer(user.key) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      expectPageHeaders(res, "/logs");
    });

    it("every file of the dashboard's build, index.html by its own name included", async () => {
      const dist = fs.mkdtempSync(path.join(os.tmpdir(), "builder-dist-"));
      fs.mkdirSync(path.join(dist, "assets"));
      fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>app</title>");
      fs.writeFileSync(path.join(dist, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
      fs.writeFileSync(path.join(dist, "assets", "index-abc.js"), "console.log(1)");
      const app = express();
      app.use(dashboardRouter(dist));
      const listener = app.listen(0, "127.0.0.1");
      await new Promise((r) => listener.once("listening", r));
      const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
      try {
        for (const p of ["/index.html", "/favicon.svg", "/assets/index-abc.js", "/", "/settings/api"]) {
          const res = await fetch(`${base}${p}`);
          expect(res.status, p).toBe(200);
          expectPageHeaders(res, p);
        }
      } finally {
        listener.close();
        fs.rmSync(dist, { recursive: true, force: true });
      }
    });
  });
});
