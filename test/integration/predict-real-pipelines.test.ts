import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, realPipelineModels } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Models published by the real vision and detection pipelines, served over HTTP: the answers must equal what the
// pipelines' own Python (preprocess, ONNX Runtime, thresholds, detection decode) gives for the same images.
// SKIP_REAL_PIPELINES=1 skips it (about a minute of training the first time; cached afterwards).
const enabled = haveFixturePython && !process.env.SKIP_REAL_PIPELINES;

describe.skipIf(!enabled)("/predict with models from the real pipelines", () => {
  let server: TestServer;
  let user: UserWithKey;
  let real: ReturnType<typeof realPipelineModels>;
  const ids = { vision_binary: 1, vision_multilabel: 2, detection: 3 } as const;

  beforeAll(async () => {
    real = realPipelineModels();
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
    for (const [name, id] of Object.entries(ids)) await publishFixture(server, user.userId, id, path.join(real.dir, name));
  }, 300_000);
  afterAll(async () => {
    await server?.teardown();
  });

  const predict = async (name: keyof typeof ids, probe: string) => {
    const b64 = fs.readFileSync(path.join(real.dir, name, "probe", probe)).toString("base64");
    const res = await fetch(`${server.url}/v1/experiments/${ids[name]}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: `data:image/png;base64,${b64}` }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it.each(["vision_binary", "vision_multilabel"] as const)("%s matches the pipeline's answers", async (name) => {
    for (let i = 0; i < 6; i++) {
      const want = real.expected[`${name}/${i}.png`];
      const { status, body } = await predict(name, `${i}.png`);
      expect(status).toBe(201);
      body.score.forEach((s: number, j: number) => expect(s).toBeCloseTo(want.score[j], 4));
      expect(body.prediccion).toEqual(want.prediccion);
      expect(Object.keys(body.gradients).sort()).toEqual(want.prediccion.flatMap((p: number, j: number) => (p ? [String(j)] : [])));
    }
  });

  it("detection matches the pipeline's decode", async () => {
    let boxes = 0;
    for (let i = 0; i < 4; i++) {
      const want = real.expected[`detection/${i}.png`];
      const { status, body } = await predict("detection", `${i}.png`);
      expect(status).toBe(201);
      expect(body.classification).toEqual(want.classification);
      expect(body.boxes).toHaveLength(want.boxes.length);
      body.boxes.forEach((b: number[], j: number) => b.forEach((v, k) => expect(v).toBeCloseTo(want.boxes[j][k], 2)));
      body.score.forEach((s: number, j: number) => expect(s).toBeCloseTo(want.score[j], 4));
      boxes += body.boxes.length;
    }
    expect(boxes).toBeGreaterThan(0);
  });
});
