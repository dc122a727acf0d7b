import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.js";
import { createPredictLane } from "../../src/http/predict-lane.js";
import { allRoutes } from "../../src/http/routes/index.js";
import { bearer, createUserWithKey, type UserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { fixtureRequest, publishFixture } from "../fixtures/serving/publish.js";
import { experiments } from "../../src/db/schema.js";

// The /predict lane (src/http/predict-lane.ts) answers the plain /predict requests without Express. Here the same
// requests go to the lane alone (anything it declines answers 599, so a decline fails the test) and to the Express
// app alone, both over the same services, and the answers must be the same: status, body and headers, except the
// headers that differ between any two requests (date, the limiter's remaining count and reset) and Express's ETag
// on error bodies, which the lane does not compute.

const TABULAR = 1,
  VISION = 2,
  QUEUED = 3;
const VOLATILE = new Set(["date", "etag", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", "connection", "keep-alive"]);

describe.skipIf(!haveFixturePython)("the /predict lane answers as the Express routes do", () => {
  let server: TestServer;
  let user: UserWithKey;
  let revoked: UserWithKey;
  let laneServer: http.Server;
  let expressServer: http.Server;
  const urls = { lane: "", express: "" };

  const listen = async (handler: http.RequestListener) => {
    const s = http.createServer(handler);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    return { s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  };

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { FETCH_MAX_BYTES: "200000", GRADCAM_MAX_SIDE: "16" });
    user = await createUserWithKey(server);
    revoked = await createUserWithKey(server);
    await server.services.auth.apiKeys.revoke(revoked.keyId);
    const fx = servingFixtures();
    await publishFixture(server, user.userId, TABULAR, fx.modelDir("tabular_binary"));
    await publishFixture(server, user.userId, VISION, fx.modelDir("vision_binary"));
    await server.services.db.insert(experiments).values({
      userId: user.userId,
      workspaceId: await personalWorkspaceId(server.services.db, user.userId),
      experimentId: QUEUED,
      request: fixtureRequest(user.userId, QUEUED),
      requestHash: "fixture-queued",
      status: "queued",
    });
    const lane = createPredictLane(server.services, allRoutes());
    const l = await listen((req, res) => {
      if (!lane(req, res)) res.writeHead(599).end("declined by the lane");
    });
    const e = await listen(createApp(server.services, allRoutes()));
    [laneServer, urls.lane, expressServer, urls.express] = [l.s, l.url, e.s, e.url];
  });
  afterAll(async () => {
    laneServer?.close();
    expressServer?.close();
    await server?.teardown();
  });

  async function send(base: string, path: string, body: string | Buffer, headers: Record<string, string>) {
    const res = await fetch(`${base}${path}`, { method: "POST", headers, body });
    const text = await res.text();
    const kept = Object.fromEntries([...res.headers.entries()].filter(([k]) => !VOLATILE.has(k)));
    return { status: res.status, text, headers: kept, all: res.headers };
  }

  const json = { "content-type": "application/json", "x-request-id": "lane-test-1" };
  const auth = (extra: Record<string, string> = {}) => ({ ...json, ...bearer(user.key), ...extra });
  const row = [63, 1, 27.5, 2];
  const image = () => servingFixtures().dataUri("rgb.jpg");

  const cases: Array<[string, string, () => string | Buffer, () => Record<string, string>, number]> = [
    ["tabular, canonical path", `/v1/experiments/${TABULAR}/predict`, () => JSON.stringify({ message: row }), () => auth(), 201],
    [
      "tabular, seed form with experiment_id in the body",
      "/predict",
      () => JSON.stringify({ message: row, experiment_id: TABULAR }),
      () => auth(),
      201,
    ],
    [
      "seed form with x-experiment-id",
      "/predict",
      () => JSON.stringify({ message: row }),
      () => auth({ "x-experiment-id": String(TABULAR) }),
      201,
    ],
    [
      "seed form with a bad x-experiment-id",
      "/predict",
      () => JSON.stringify({ message: row }),
      () => auth({ "x-experiment-id": "one" }),
      400,
    ],
    ["seed form naming no model", "/predict", () => JSON.stringify({ message: row }), () => auth(), 400],
    [
      "vision with a JPEG data: URI (Grad-CAM maps)",
      `/v1/experiments/${VISION}/predict`,
      () => JSON.stringify({ message: image() }),
      () => auth(),
      201,
    ],
    ["no API key", `/v1/experiments/${TABULAR}/predict`, () => JSON.stringify({ message: row }), () => json, 401],
    [
      "an invalid API key",
      `/v1/experiments/${TABULAR}/predict`,
      () => JSON.stringify({ message: row }),
      () => ({ ...json, ...bearer("bld_not_a_key") }),
      401,
    ],
    [
      "a revoked API key",
      `/v1/experiments/${TABULAR}/predict`,
      () => JSON.stringify({ message: row }),
      () => ({ ...json, ...bearer(revoked.key) }),
      403,
    ],
    ["a body that is not JSON", `/v1/experiments/${TABULAR}/predict`, () => "{not json", () => auth(), 400],
    ["a body that is JSON but not an object", `/v1/experiments/${TABULAR}/predict`, () => '"text"', () => auth(), 400],
    [
      "a NUL character in a string",
      `/v1/experiments/${TABULAR}/predict`,
      () => JSON.stringify({ message: "data:\u0000" }),
      () => auth(),
      400,
    ],
    [
      "a body over the limit",
      `/v1/experiments/${VISION}/predict`,
      () => JSON.stringify({ message: "x".repeat(400_000) }),
      () => auth(),
      413,
    ],
    [
      "text/plain instead of JSON",
      `/v1/experiments/${TABULAR}/predict`,
      () => JSON.stringify({ message: row }),
      () => auth({ "content-type": "text/plain" }),
      400,
    ],
    [
      "a gzip-encoded body",
      `/v1/experiments/${TABULAR}/predict`,
      () => gzipSync(JSON.stringify({ message: row })),
      () => auth({ "content-encoding": "gzip" }),
      201,
    ],
    ["an unknown experiment", "/v1/experiments/999/predict", () => JSON.stringify({ message: row }), () => auth(), 404],
    ["an experiment still queued", `/v1/experiments/${QUEUED}/predict`, () => JSON.stringify({ message: row }), () => auth(), 409],
    ["an id that is not a number", "/v1/experiments/abc/predict", () => JSON.stringify({ message: row }), () => auth(), 400],
    ["a row of the wrong length", `/v1/experiments/${TABULAR}/predict`, () => JSON.stringify({ message: [1, 2] }), () => auth(), 400],
    [
      "an image that does not decode",
      `/v1/experiments/${VISION}/predict`,
      () => JSON.stringify({ message: `data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]).toString("base64")}` }),
      () => auth(),
      415,
    ],
    [
      "an invalid x-request-id (replaced)",
      `/v1/experiments/${TABULAR}/predict`,
      () => JSON.stringify({ message: row }),
      () => auth({ "x-request-id": "bad id!" }),
      201,
    ],
  ];

  it.each(cases)("%s", async (_name, path, body, headers, status) => {
    const [lane, viaExpress] = [await send(urls.lane, path, body(), headers()), await send(urls.express, path, body(), headers())];
    expect(lane.status, lane.text).toBe(status);
    expect(viaExpress.status, viaExpress.text).toBe(status);
    if (headers()["x-request-id"] === "bad id!") {
      // A new id each: compare its form, not its value.
      expect(lane.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      delete lane.headers["x-request-id"];
      delete viaExpress.headers["x-request-id"];
    }
    expect(lane.text).toBe(viaExpress.text);
    expect(lane.headers).toEqual(viaExpress.headers);
    if (status !== 401)
      for (const k of ["x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"])
        expect(lane.all.has(k), k).toBe(viaExpress.all.has(k));
  });

  it("refuses over the key's rate limit with the same 429 and Retry-After", async () => {
    const limited = await Promise.all([
      createUserWithKey(server, { rateLimitPerMinute: 1 }),
      createUserWithKey(server, { rateLimitPerMinute: 1 }),
    ]);
    const go = (base: string, key: string) =>
      send(base, "/predict", JSON.stringify({ message: row, experiment_id: TABULAR }), { ...json, ...bearer(key) });
    const lane = [await go(urls.lane, limited[0].key), await go(urls.lane, limited[0].key)];
    const viaExpress = [await go(urls.express, limited[1].key), await go(urls.express, limited[1].key)];
    expect([lane[0].status, lane[1].status]).toEqual([404, 429]); // the other user's key: experiment 1 is not theirs
    expect([viaExpress[0].status, viaExpress[1].status]).toEqual([404, 429]);
    expect(lane[1].text).toBe(viaExpress[1].text);
    expect(Object.keys(lane[1].headers).sort()).toEqual(Object.keys(viaExpress[1].headers).sort());
    expect(lane[1].all.get("retry-after")).toMatch(/^\d+$/);
  });

  it("declines what it does not serve, which Express then answers", async () => {
    for (const [method, path] of [
      ["POST", "/predict?experiment_id=1"],
      ["POST", "/predict/"],
      ["GET", "/predict"],
      ["POST", "/v1/experiments/%31/predict"],
      ["POST", "/v1/experiments/1/predict/x"],
    ]) {
      const res = await fetch(`${urls.lane}${path}`, {
        method,
        headers: auth(),
        body: method === "POST" ? JSON.stringify({ message: row }) : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(599);
    }
  });

  it("counts its requests in the same metrics, under the routes' own labels", async () => {
    await send(urls.lane, `/v1/experiments/${TABULAR}/predict`, JSON.stringify({ message: row }), auth());
    const text = await server.services.metrics.registry.metrics();
    expect(text).toMatch(/route="\/v1\/experiments\/:experiment_id\/predict",status="201"/);
    expect(text).toMatch(/route="\/predict",status="400"/);
  });
});
