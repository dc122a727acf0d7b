import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ApiError } from "../../src/errors.js";
import { createApp } from "../../src/http/app.js";
import { createPredictLane } from "../../src/http/predict-lane.js";
import { experimentIdParams } from "../../src/http/params.js";
import { defineRoute, type AnyRoute } from "../../src/http/route.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// One handler, two ways in: the route builder's runRoute (route.ts) serves a plain route on Express (app.ts) and on
// the /predict lane (predict-lane.ts). Here two plain routes that echo what their handler was given stand at the
// lane's two paths, over a real server's services (auth, rate limits), and the same requests through each way in
// must get the same answers: what the handler read, its own error with its headers, and the builder's refusals.
// (predict-lane.test.ts does the same with the real /predict routes and models.)

const VOLATILE = new Set(["date", "etag", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", "connection", "keep-alive"]);

const echoBody = z.object({ n: z.number() });

async function echo(ctx: {
  req: { method: string; get(name: string): string | undefined };
  params: unknown;
  query: unknown;
  body: { n: number };
  auth: { userId: string };
}) {
  if (ctx.body.n < 0)
    throw new ApiError(422, "negative", "n must not be negative", [{ field: "n", message: "at least 0" }], {
      "x-refused-because": "negative",
    });
  const seen = {
    method: ctx.req.method,
    header: ctx.req.get("x-thing") ?? null,
    params: ctx.params,
    query: ctx.query ?? null,
    n: ctx.body.n,
    user: ctx.auth.userId,
  };
  return { status: 201, headers: { "x-handler": "echo" }, body: seen };
}

const routes: AnyRoute[] = [
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/predict",
    auth: "api_key",
    plain: true,
    summary: "echo",
    params: experimentIdParams,
    body: echoBody,
    handler: echo,
  }),
  defineRoute({
    method: "post",
    path: "/predict",
    auth: "api_key",
    plain: true,
    summary: "echo",
    query: z.object({ experiment_id: z.coerce.number().optional() }),
    body: echoBody,
    handler: echo,
  }),
];

describe("a plain route runs the same on Express and on the /predict lane", () => {
  let server: TestServer;
  let user: UserWithKey;
  const servers: http.Server[] = [];
  const urls = { lane: "", express: "" };

  const listen = async (handler: http.RequestListener) => {
    const s = http.createServer(handler);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
    const lane = createPredictLane(server.services, routes);
    urls.lane = await listen((req, res) => {
      if (!lane(req, res)) res.writeHead(599).end("declined by the lane");
    });
    urls.express = await listen(createApp(server.services, routes));
  });
  afterAll(async () => {
    for (const s of servers) s.close();
    await server?.teardown();
  });

  async function send(base: string, path: string, body: string, headers: Record<string, string>) {
    const res = await fetch(`${base}${path}`, { method: "POST", headers, body });
    const text = await res.text();
    return { status: res.status, text, headers: Object.fromEntries([...res.headers.entries()].filter(([k]) => !VOLATILE.has(k))) };
  }

  const json = { "content-type": "application/json", "x-request-id": "both-ways-1" };
  const auth = (extra: Record<string, string> = {}) => ({ ...json, ...bearer(user.key), ...extra });

  it.each([
    ["the handler's answer, with a header it read", "/v1/experiments/7/predict", '{"n": 3}', () => auth({ "x-thing": "seen" }), 201],
    ["the seed path (an empty query, parsed by its schema)", "/predict", '{"n": 0}', () => auth(), 201],
    ["the handler's own error, with its headers and details", "/v1/experiments/7/predict", '{"n": -1}', () => auth(), 422],
    ["a bad path parameter and a bad body field, in one 400", "/v1/experiments/0/predict", '{"n": "three"}', () => auth(), 400],
    ["a body that is not JSON", "/predict", "{n:", () => auth(), 400],
    ["no API key (refused before the body is read)", "/predict", '{"n": 1}', () => json, 401],
  ])("%s", async (_name, path, body, headers, status) => {
    const lane = await send(urls.lane, path, body, headers());
    const viaExpress = await send(urls.express, path, body, headers());
    expect(lane.status, lane.text).toBe(status);
    expect(viaExpress.status, viaExpress.text).toBe(status);
    expect(lane.text).toBe(viaExpress.text);
    expect(lane.headers).toEqual(viaExpress.headers);
    if (status === 201) expect(JSON.parse(lane.text)).toMatchObject({ method: "POST", user: user.userId });
    if (status === 422) expect(lane.headers["x-refused-because"]).toBe("negative");
  });
});
