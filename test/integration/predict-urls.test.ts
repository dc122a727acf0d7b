import http from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Image links through the real /predict: the allow-list lets the test reach a server on 127.0.0.1,
// everything else internal stays refused; caps on pixels come from config.
describe.skipIf(!haveFixturePython)("/predict with image links", () => {
  let server: TestServer;
  let images: http.Server;
  let port: number;
  let user: UserWithKey;
  let small: Buffer, large: Buffer;

  beforeAll(async () => {
    small = await sharp({ create: { width: 30, height: 20, channels: 3, background: "#884422" } })
      .png()
      .toBuffer();
    large = await sharp({ create: { width: 100, height: 100, channels: 3, background: "#224488" } })
      .png()
      .toBuffer();
    images = http.createServer((req, res) => {
      if (req.url === "/small.png") return void res.writeHead(200, { "content-type": "text/plain" }).end(small); // wrong type on purpose
      if (req.url === "/large.png") return void res.writeHead(200).end(large);
      if (req.url === "/redirect") return void res.writeHead(302, { location: "http://169.254.169.254/x.png" }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => images.listen(0, "127.0.0.1", r));
    port = (images.address() as AddressInfo).port;
    server = await startTestServer(primaryTarget(), { FETCH_ALLOW_HOSTS: "127.0.0.1", FETCH_MAX_PIXELS: "1000", GRADCAM_MAX_SIDE: "32" });
    user = await createUserWithKey(server);
    await publishFixture(server, user.userId, 1, servingFixtures().modelDir("vision_binary"));
  });
  afterAll(async () => {
    await server?.teardown();
    images?.closeAllConnections();
    await new Promise((r) => images?.close(r));
  });

  const predict = async (message: string) => {
    const res = await fetch(`${server.url}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", "x-experiment-id": "1" }),
      body: JSON.stringify({ message }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("predicts from an allow-listed link, sniffing the bytes", async () => {
    const r = await predict(`http://127.0.0.1:${port}/small.png`);
    expect(r.status).toBe(201);
    expect([r.body.columnas, r.body.filas]).toEqual([30, 20]);
  });

  it.each([
    ["/large.png via link", () => `http://127.0.0.1:${port}/large.png`, 413, "image_too_many_pixels"],
    ["a redirect to metadata", () => `http://127.0.0.1:${port}/redirect`, 403, "blocked_address"],
    ["a private address", () => "http://10.0.0.7/a.png", 403, "blocked_address"],
    ["IPv6 loopback", () => `http://[::1]:${port}/small.png`, 403, "blocked_address"],
    ["localhost by name", () => `http://localhost:${port}/small.png`, 403, "blocked_host"],
    ["a 404 upstream", () => `http://127.0.0.1:${port}/nothing.png`, 422, "fetch_failed"],
  ])("refuses %s", async (_name, url, status, code) => {
    const r = await predict(url());
    expect([r.status, r.body.error, r.body.code]).toEqual([status, 1, code]);
  });

  it("caps pixels for data: URIs too", async () => {
    const r = await predict(`data:image/png;base64,${large.toString("base64")}`);
    expect([r.status, r.body.error, r.body.code]).toEqual([413, 1, "image_too_many_pixels"]);
  });
});
