import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 6's end-to-end cases beyond binary WDBC (experiments-e2e.test.ts): multiclass with a categorical (string)
// feature, and regression, each from POST /v1/experiments to ready through the real tabular pipeline, then /predict
// on the published model with the categorical column sent as its manifest code, and as an unknown code (400).

vi.setConfig({ testTimeout: 240_000 });

/** A deterministic generator, so the data (and its signal) is the same on every run. */
function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function multiclassCsv(): string {
  const rand = rng(11);
  const sites = ["north", "south", "west"];
  const rows = ["patient,grade,age,marker,site"];
  for (let i = 0; i < 300; i++) {
    const site = sites[Math.floor(rand() * 3)];
    const marker = rand() * 10;
    // The grade depends on the marker and on the (string) site, so the categorical column carries signal.
    const z = marker + (site === "south" ? 3 : site === "west" ? -3 : 0) + (rand() - 0.5) * 2;
    const grade = z < 4 ? "low" : z < 8 ? "mid" : "high";
    rows.push(`p${i},${grade},${(30 + rand() * 50).toFixed(1)},${marker.toFixed(3)},${site}`);
  }
  return rows.join("\r\n") + "\r\n";
}

function regressionCsv(): string {
  const rand = rng(23);
  const rows = ["patient,los_days,age,severity,ward"];
  for (let i = 0; i < 240; i++) {
    const age = 20 + rand() * 60;
    const severity = rand() * 5;
    const ward = rand() < 0.5 ? "icu" : "general";
    const los = 1 + 0.05 * age + 2 * severity + (ward === "icu" ? 4 : 0) + (rand() - 0.5);
    rows.push(`p${i},${los.toFixed(2)},${age.toFixed(1)},${severity.toFixed(2)},${ward}`);
  }
  return rows.join("\n") + "\n";
}

describe(`tabular experiments through the API on ${primaryTarget()}`, () => {
  let server: TestServer;
  let client: Api;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    const user = await createUserWithKey(server);
    userId = user.userId;
    client = api(server.url, user.key);
    await server.services.bucket.write(`${userId}/multi/data.zip`, Readable.from(makeZip({ "grades.csv": multiclassCsv() })));
    await server.services.bucket.write(`${userId}/reg/data.zip`, Readable.from(makeZip({ "stays.csv": regressionCsv() })));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("trains a multiclass model with a categorical feature and predicts with its codes", async () => {
    const body = dataRequest(userId, 31, `${userId}/multi/data.zip`, ["age", "marker", "site"], {
      label_cols: ["grade"],
      optimization_metric: "F-macro",
      time_budget_s: 6,
    });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 31, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.metrics.f_macro.value).toBeGreaterThan(0.6); // three balanced-ish classes: chance is about 0.33
    expect(Object.keys(done.metrics.f_macro.per_class).sort()).toEqual(["0", "1", "2"]);

    const model = await client.get("/v1/models/31");
    expect(model.status).toBe(200);
    expect(model.body.inputs.data_cols).toEqual(["age", "marker", "site"]);
    const site = model.body.inputs.columns.find((c: { name: string }) => c.name === "site");
    expect(site.type).toBe("categorical");
    // The values are training data (issue 19): only their count is shown; a caller sends the value as written.
    expect(site).toEqual({ name: "site", type: "categorical", categories: 3 });
    expect(JSON.stringify(model.body)).not.toMatch(/north|south|west/);

    const pred = await client.post("/v1/experiments/31/predict", { message: [50, 9.5, "south"] });
    expect(pred.status).toBe(201);
    expect(Object.keys(pred.body).sort()).toEqual(["classes", "error", "prediccion", "score"]);
    expect(pred.body.error).toBe(0);
    expect(pred.body.prediccion).toHaveLength(3);
    expect(pred.body.prediccion.reduce((a: number, b: number) => a + b, 0)).toBe(1);
    // marker 9.5 in the south is far into "high" by construction.
    const high = Object.entries(pred.body.classes as Record<string, string>).find(([, name]) => name === "high")![0];
    expect(pred.body.prediccion[Number(high)]).toBe(1);

    const unknown = await client.post("/v1/experiments/31/predict", { message: [50, 9.5, 7] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("invalid_request");
    expect(JSON.stringify(unknown.body.details)).toMatch(/site: not one of the 3 categories/);
    expect(JSON.stringify(unknown.body)).not.toMatch(/north|south|west/);
  });

  it("trains a regression model and answers prediccion [value] with score [value]", async () => {
    const body = dataRequest(userId, 32, `${userId}/reg/data.zip`, ["age", "severity", "ward"], {
      label_cols: ["los_days"],
      model_type: 1,
      time_budget_s: 6,
    });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 32, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.metrics.r2.value).toBeGreaterThan(0.8);
    expect(done.metrics.rmse.ci_low).toBeLessThanOrEqual(done.metrics.rmse.value);

    const model = await client.get("/v1/models/32");
    expect(model.body.inputs.columns.find((c: { name: string }) => c.name === "ward")).toEqual({
      name: "ward",
      type: "categorical",
      categories: expect.any(Number),
    });
    const pred = await client.post("/v1/experiments/32/predict", { message: [60, 4, "icu"] });
    expect(pred.status).toBe(201);
    expect(pred.body.error).toBe(0);
    expect(pred.body.prediccion).toHaveLength(1);
    expect(pred.body.score).toEqual(pred.body.prediccion);
    // 1 + 0.05*60 + 2*4 + 4 = 16 days by construction.
    expect(pred.body.prediccion[0]).toBeGreaterThan(12);
    expect(pred.body.prediccion[0]).toBeLessThan(20);
  });
});
