import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { camSize } from "../../src/serving/postprocess.js";
import { objectUri, uriScheme } from "../../src/storage/bucket.js";
import { TEST_STORAGE } from "../helpers/storage.js";

// Real ONNX models of each kind (test/fixtures/serving/make_fixtures.py) published into a real server,
// exercised over HTTP; scores and decisions compared with what Python/ONNX Runtime computed for the same inputs.

const EXP = {
  vision_binary: 1,
  vision_multilabel: 2,
  vision_multiclass: 3,
  detection: 4,
  tabular_binary: 5,
  tabular_multiclass: 6,
  tabular_regression: 7,
} as const;

describe.skipIf(!haveFixturePython)("POST /predict for every model kind", () => {
  const fx = haveFixturePython ? servingFixtures() : (undefined as never);
  let server: TestServer;
  let alice: UserWithKey;
  let bob: UserWithKey;

  const predict = async (key: string, exp: number, message: unknown) => {
    const res = await fetch(`${server.url}/v1/experiments/${exp}/predict`, {
      method: "POST",
      headers: bearer(key, { "content-type": "application/json" }),
      body: JSON.stringify({ message }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { GRADCAM_MAX_SIDE: "64" });
    alice = await createUserWithKey(server);
    bob = await createUserWithKey(server);
    for (const [name, id] of Object.entries(EXP)) await publishFixture(server, alice.userId, id, fx.modelDir(name));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  describe.each(["vision_binary", "vision_multilabel", "vision_multiclass"] as const)("%s", (name) => {
    it.each(["rgb.png", "grey.png", "tall.png", "rgba.png"])("answers the seed's fields for %s", async (img) => {
      const { status, body } = await predict(alice.key, EXP[name], fx.dataUri(img));
      expect(status).toBe(201);
      const want = fx.expected[`${name}/${img}`];
      expect(Object.keys(body).sort()).toEqual(["classes", "columnas", "error", "filas", "gradients", "prediccion", "score"]);
      expect(body.error).toBe(0);
      expect(body.prediccion).toEqual(want.prediccion);
      expect(body.score).toHaveLength(want.score.length);
      body.score.forEach((s: number, i: number) => expect(s).toBeCloseTo(want.score[i], 4));
      const k = want.score.length;
      expect(body.classes).toEqual(Object.fromEntries(Array.from({ length: k }, (_, i) => [String(i), `${name}-class-${i}`])));
      // Grad-CAM: one map per positive class, at the image's size scaled to GRADCAM_MAX_SIDE=64, integers 0..255.
      const size =
        img === "tall.png"
          ? camSize(31, 130, 64)
          : img === "grey.png"
            ? camSize(30, 60, 64)
            : img === "rgba.png"
              ? camSize(60, 50, 64)
              : camSize(103, 77, 64);
      expect([body.columnas, body.filas]).toEqual([size.columnas, size.filas]);
      expect(Math.max(body.columnas, body.filas)).toBeLessThanOrEqual(64);
      const positives = want.prediccion.flatMap((p: number, i: number) => (p === 1 ? [String(i)] : []));
      expect(Object.keys(body.gradients).sort()).toEqual(positives);
      for (const map of Object.values(body.gradients) as number[][][]) {
        expect(map).toHaveLength(body.filas);
        for (const row of map) {
          expect(row).toHaveLength(body.columnas);
          for (const v of row) expect(Number.isInteger(v) && v >= 0 && v <= 255).toBe(true);
        }
        const flat = map.flat();
        expect(Math.max(...flat)).toBeGreaterThan(200); // normalised: the hottest spot is near 255
        expect(Math.min(...flat)).toBeLessThan(60);
      }
    });
  });

  it.each(["rgb.png", "tall.png", "grey.png", "palette.png"])("detection answers boxes in original pixels for %s", async (img) => {
    const { status, body } = await predict(alice.key, EXP.detection, fx.dataUri(img));
    expect(status).toBe(201);
    const want = fx.expected[`detection/${img}`];
    expect(Object.keys(body).sort()).toEqual(["boxes", "classes", "classification", "error", "score"]);
    expect(body.error).toBe(0);
    expect(body.classes).toEqual({ "0": "cell", "1": "blob" });
    expect(body.classification).toEqual(want.classification);
    expect(body.boxes).toHaveLength(want.boxes.length);
    body.boxes.forEach((b: number[], i: number) => b.forEach((v, j) => expect(v).toBeCloseTo(want.boxes[i][j], 2)));
    body.score.forEach((s: number, i: number) => expect(s).toBeCloseTo(want.score[i], 4));
    expect(body.boxes.length).toBeLessThanOrEqual(5);
  });

  it("detection output is not trivially empty for the fixtures", () => {
    const total = ["rgb.png", "tall.png", "grey.png", "palette.png"].reduce((s, i) => s + fx.expected[`detection/${i}`].boxes.length, 0);
    expect(total).toBeGreaterThan(0);
  });

  describe.each(["tabular_binary", "tabular_multiclass", "tabular_regression"] as const)("%s", (name) => {
    it.each([0, 1, 2, 3])("row %i", async (i) => {
      const want = fx.expected[`${name}/row${i}`];
      const { status, body } = await predict(alice.key, EXP[name], want.row);
      expect(status).toBe(201);
      expect(Object.keys(body).sort()).toEqual(["classes", "error", "prediccion", "score"]);
      expect(body.error).toBe(0);
      if (name === "tabular_regression") {
        expect(body.prediccion).toHaveLength(1);
        expect(body.prediccion[0]).toBeCloseTo(want.score[0], 4);
        expect(body.score).toEqual(body.prediccion);
        expect(body.classes).toEqual({ "0": "glucose" });
      } else {
        expect(body.prediccion).toEqual(want.prediccion);
        body.score.forEach((s: number, j: number) => expect(s).toBeCloseTo(want.score[j], 5));
      }
    });
  });

  it("refuses bad tabular messages with 400 naming the expected columns", async () => {
    const cases: unknown[] = [
      [63, 1, 27.5],
      [63, 1, 27.5, 2, 9],
      [63, 1, null, 2],
      [63, 1, "27.5", 2],
      "63,1,27.5,2",
      [63, 7, 27.5, 2],
      [63, 1, 27.5, 0.5],
    ];
    for (const message of cases) {
      const { status, body } = await predict(alice.key, EXP.tabular_binary, message);
      expect(status, JSON.stringify(message)).toBe(400);
      expect(body.message).toContain("age, sex, bmi, site");
    }
    // A categorical value may be sent as its original label too.
    expect((await predict(alice.key, EXP.tabular_binary, [63, "M", 27.5, "east"])).status).toBe(201);
  });

  it("names the model by body, header or query on /predict, and 400s without one", async () => {
    const row = fx.expected["tabular_multiclass/row0"].row;
    const post = (path: string, body: object, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: bearer(alice.key, { "content-type": "application/json", ...headers }),
        body: JSON.stringify(body),
      });
    const viaBody = await post("/predict", { message: row, experiment_id: EXP.tabular_multiclass });
    const viaHeader = await post("/predict", { message: row }, { "x-experiment-id": String(EXP.tabular_multiclass) });
    const viaQuery = await post(`/predict?experiment_id=${EXP.tabular_multiclass}`, { message: row });
    for (const r of [viaBody, viaHeader, viaQuery]) expect(r.status).toBe(201);
    const bodies = await Promise.all([viaBody.json(), viaHeader.json(), viaQuery.json()]);
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
    const none = await post("/predict", { message: row });
    expect(none.status).toBe(400);
    expect(((await none.json()) as any).code).toBe("missing_experiment_id");
    const noMessage = await post("/predict", { experiment_id: 5 });
    expect(noMessage.status).toBe(400);
  });

  it("answers 404 for another user's model and for an experiment without one", async () => {
    const other = await predict(bob.key, EXP.tabular_binary, fx.expected["tabular_binary/row0"].row);
    expect(other.status).toBe(404);
    expect(other.body.code).toBe("not_found");
    expect((await predict(alice.key, 99, [1, 2, 3, 4])).status).toBe(404);
    expect((await fetch(`${server.url}/v1/models/${EXP.vision_binary}`, { headers: bearer(bob.key) })).status).toBe(404);
    expect((await fetch(`${server.url}/v1/models/${EXP.vision_binary}/download`, { headers: bearer(bob.key) })).status).toBe(404);
  });

  it("lists models, describes one and downloads its ONNX file", async () => {
    const list = (await (await fetch(`${server.url}/v1/models`, { headers: bearer(alice.key) })).json()) as any;
    expect(list.data.map((m: any) => m.experiment_id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const one = (await (await fetch(`${server.url}/v1/models/${EXP.tabular_binary}`, { headers: bearer(alice.key) })).json()) as any;
    expect(one).toMatchObject({
      experiment_id: 5,
      version: 1,
      kind: "tabular",
      problem: "binary",
      classes: { "0": "risk-0", "1": "risk-1" },
      thresholds: [0.6, 0.4],
    });
    expect(one.inputs.data_cols).toEqual(["age", "sex", "bmi", "site"]);
    expect(one.metrics.test.accuracy.value).toBe(0.9);
    const dl = await fetch(`${server.url}/v1/models/${EXP.detection}/download`, { headers: bearer(alice.key) });
    expect(dl.status).toBe(200);
    const bytes = Buffer.from(await dl.arrayBuffer());
    const fs = await import("node:fs");
    expect(bytes.equals(fs.readFileSync(`${fx.modelDir("detection")}/model.onnx`))).toBe(true);
  });

  it(`reads links to the caller's own objects only (${TEST_STORAGE === "s3" ? "s3://" : "gs://"} on this storage)`, async () => {
    const { bucket } = server.services;
    const { Readable } = await import("node:stream");
    const scheme = uriScheme(bucket);
    expect(scheme).toBe(TEST_STORAGE === "s3" ? "s3" : "gs");
    await bucket.write(`${alice.userId}/uploads/rgb.png`, Readable.from(fx.image("rgb.png")));
    const own = await predict(alice.key, EXP.vision_binary, objectUri(bucket, `${alice.userId}/uploads/rgb.png`));
    expect(own.status).toBe(201);
    expect(own.body.prediccion).toEqual(fx.expected["vision_binary/rgb.png"].prediccion);
    await publishFixture(server, bob.userId, 1, fx.modelDir("vision_binary"));
    const theirs = await predict(bob.key, 1, objectUri(bucket, `${alice.userId}/uploads/rgb.png`));
    expect(theirs.status).toBe(404);
    expect((await predict(alice.key, EXP.vision_binary, `${scheme}://other-bucket/${alice.userId}/uploads/rgb.png`)).status).toBe(404);
    expect((await predict(alice.key, EXP.vision_binary, `${scheme}://${bucket.name}/${alice.userId}/../x.png`)).status).toBe(400);
    // The other storage's scheme is refused in words that say which one this deployment links with.
    const other = scheme === "s3" ? "gs" : "s3";
    const wrong = await predict(alice.key, EXP.vision_binary, `${other}://${bucket.name}/${alice.userId}/uploads/rgb.png`);
    expect([wrong.status, wrong.body.code]).toEqual([400, "invalid_uri"]);
    expect(wrong.body.message).toBe(`this deployment's storage is linked as ${scheme}://<bucket>/<path>, not ${other}://`);
    const unknown = await predict(alice.key, EXP.vision_binary, `ftp://${bucket.name}/x.png`);
    expect([unknown.status, unknown.body.code]).toEqual([400, "unsupported_uri_scheme"]);
    expect(unknown.body.message).toMatch(new RegExp(`or ${scheme}://$`));
  });

  it("swaps in a newly published version without failing a request", async () => {
    const row = fx.expected["tabular_binary/row0"].row;
    const before = await predict(alice.key, 8, row).catch(() => null);
    expect(before?.status).toBe(404);
    await publishFixture(server, alice.userId, 8, fx.modelDir("tabular_binary"), 1);
    const inflight: Array<Promise<{ status: number; body: any }>> = [];
    for (let i = 0; i < 30; i++) inflight.push(predict(alice.key, 8, row));
    await publishFixture(server, alice.userId, 8, fx.modelDir("tabular_multiclass"), 2);
    for (let i = 0; i < 30; i++) inflight.push(predict(alice.key, 8, row));
    const results = await Promise.all(inflight);
    expect(results.every((r) => r.status === 201)).toBe(true);
    // The old version answers until the new one is warm (its load time depends on the machine), then the
    // experiment answers with three classes (the multiclass model); no request in between may fail.
    const deadline = Date.now() + 15_000;
    let after = await predict(alice.key, 8, row);
    while (after.status === 201 && after.body.score.length !== 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await predict(alice.key, 8, row);
    }
    expect(after.status).toBe(201);
    expect(after.body.score).toHaveLength(3);
    const info = (await (await fetch(`${server.url}/v1/models/8`, { headers: bearer(alice.key) })).json()) as any;
    expect(info.version).toBe(2);
  });

  it("accepts a multi-megabyte data: URI (past the 1 MB JSON limit of other routes)", async () => {
    const sharp = (await import("sharp")).default;
    const png = await sharp({
      create: { width: 1200, height: 1000, channels: 3, background: "#000", noise: { type: "gaussian", mean: 128, sigma: 50 } },
    })
      .png()
      .toBuffer();
    expect(png.length).toBeGreaterThan(1024 * 1024);
    const { status, body } = await predict(alice.key, EXP.vision_binary, `data:image/png;base64,${png.toString("base64")}`);
    expect(status).toBe(201);
    expect([body.columnas, body.filas]).toEqual([64, 53]);
  });

  it("refuses a non-image and a non-URI message for image models", async () => {
    const html = `data:image/png;base64,${Buffer.from("<html>not an image</html>").toString("base64")}`;
    const r1 = await predict(alice.key, EXP.vision_binary, html);
    expect([r1.status, r1.body.code]).toEqual([415, "unsupported_image_type"]);
    const r2 = await predict(alice.key, EXP.vision_binary, [1, 2, 3]);
    expect(r2.status).toBe(400);
    expect(r2.body.message).toMatch(new RegExp(`or ${uriScheme(server.services.bucket)}://\\)$`));
    const image = (await (await fetch(`${server.url}/v1/models/${EXP.vision_binary}`, { headers: bearer(alice.key) })).json()) as any;
    expect(image.inputs.message).toMatch(new RegExp(`or ${uriScheme(server.services.bucket)}://<bucket>/<your path>$`));
    const r3 = await predict(alice.key, EXP.vision_binary, "file:///etc/passwd");
    expect([r3.status, r3.body.code]).toEqual([400, "unsupported_uri_scheme"]);
  });
});
