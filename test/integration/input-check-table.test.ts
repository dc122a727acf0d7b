import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { sharedDatasets } from "../fixtures/serving/fixtures.js";
import { dataRequest, startExperimentServer, waitFor, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 49 item 5 for tables, through the HTTP API and the real tabular pipeline on Pima: a row far outside the
// training data (glucose 10^9; glucose -10 with age 500) is answered as before with x-input-check: unfamiliar,
// ordinary rows are familiar; PUT /v1/models/{id}/input-check {mode: refuse} publishes a version that answers them
// 422 error 1 (Spanish or English); batch results carry an input_check column. Skipped without ../shared/datasets.

vi.setConfig({ testTimeout: 240_000 });

const PIMA = path.join(sharedDatasets, "pima/pima-indians-diabetes.data.csv");
const COLS = ["Pregnancies", "Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI", "DiabetesPedigreeFunction", "Age"];

describe.skipIf(!fs.existsSync(PIMA))("unfamiliar rows, a Pima model from the real pipeline", () => {
  let server: TestServer;
  let user: { userId: string; key: string };
  let client: Api;
  let rows: number[][];

  beforeAll(async () => {
    ({ server, user, client } = await startExperimentServer());
    const lines = fs.readFileSync(PIMA, "utf8").trim().split(/\r?\n/);
    rows = lines.map((l) => l.split(",").slice(0, 8).map(Number));
    const csv = [`id,${COLS.join(",")},diagnosis`, ...lines.map((l, i) => `${i + 1},${l}`)].join("\n") + "\n";
    const zip = `${user.userId}/pima/data.zip`;
    await server.services.bucket.write(zip, Readable.from(makeZip({ "data.csv": csv })));
    expect((await client.post("/v1/experiments", dataRequest(user.userId, 1, zip, COLS, { time_budget_s: 8 }))).status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
  }, 240_000);
  afterAll(async () => {
    await server?.teardown();
  });

  const predict = async (message: unknown[], lang = "en") => {
    const res = await fetch(`${server.url}/predict`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json", "accept-language": lang }),
      body: JSON.stringify({ experiment_id: 1, message }),
    });
    return { status: res.status, check: res.headers.get("x-input-check"), body: (await res.json()) as any };
  };
  const far = {
    glucose: [2, 1e9, 70, 20, 80, 32, 0.4, 35],
    lowGlucoseOldAge: [2, -10, 70, 20, 80, 32, 0.4, 500],
  };

  it("far rows are answered as before but unfamiliar; the dataset's own rows are familiar", async () => {
    let familiar = 0;
    const sample = rows.slice(0, 100);
    for (const r of sample) {
      const a = await predict(r);
      expect(a.status).toBe(201);
      if (a.check === "familiar") familiar++;
    }
    // Training, validation and test rows alike: the ranges come from training, the threshold from validation.
    expect(familiar).toBeGreaterThanOrEqual(97);
    for (const message of Object.values(far)) {
      const a = await predict(message);
      expect(a.status).toBe(201);
      expect(a.check).toBe("unfamiliar");
      expect(Object.keys(a.body)).toEqual(["prediccion", "score", "classes", "error"]);
      expect(a.body.error).toBe(0);
    }
    const setting = await client.get("/v1/models/1/input-check");
    expect(setting.body).toMatchObject({ available: true, mode: "flag", checks: "table", version: 1 });
  });

  it("refuse: a new version answers far rows 422 error 1 in Spanish or English; back to flag, batches get a column", async () => {
    const put = (mode: string) =>
      fetch(`${server.url}/v1/models/1/input-check`, {
        method: "PUT",
        headers: bearer(user.key, { "content-type": "application/json" }),
        body: JSON.stringify({ mode }),
      });
    const set = await put("refuse");
    expect(set.status).toBe(201);
    expect(await set.json()).toMatchObject({ mode: "refuse", version: 2 });
    expect((await put("refuse")).status).toBe(200); // already so: no new version
    const en = await predict(far.glucose);
    expect(en.status).toBe(422);
    expect(en.body).toMatchObject({ error: 1, code: "unfamiliar_input" });
    expect(en.body.message).toContain("this row's values lie far outside the data this model was trained on");
    const es = await predict(far.lowGlucoseOldAge, "es");
    expect(es.status).toBe(422);
    expect(es.body.message).toContain("los valores de esta fila quedan muy lejos de los datos con los que se entrenó este modelo");
    const ordinary = await predict(rows[0]);
    expect([ordinary.status, ordinary.check]).toEqual([201, "familiar"]);
    expect((await put("sometimes")).status).toBe(400);
    const audit = await client.get("/v1/audit");
    expect(audit.body.data.find((e: { action: string }) => e.action === "input_check_mode_changed")).toMatchObject({
      target: "experiment 1",
    });

    expect((await put("flag")).status).toBe(201);
    const csv = [["id", ...COLS].join(","), ["a", ...rows[0]].join(","), ["b", ...far.glucose].join(",")].join("\n") + "\n";
    const res = await fetch(`${server.url}/v1/models/1/batch`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "text/csv" }),
      body: csv,
    });
    expect(res.status).toBe(202);
    const { batch_id } = (await res.json()) as { batch_id: string };
    await waitFor("the batch", async () => {
      const b = await client.get(`/v1/batches/${batch_id}`);
      return b.body.status === "done" || b.body.status === "failed" ? b.body : undefined;
    });
    const text = await (await fetch(`${server.url}/v1/batches/${batch_id}/results.csv`, { headers: bearer(user.key) })).text();
    const [header, a, b] = text
      .trimEnd()
      .split("\n")
      .map((l) => l.split(","));
    const at = header.indexOf("input_check");
    expect(at).toBeGreaterThan(header.indexOf("out_of_range"));
    expect([a[at], b[at]]).toEqual(["familiar", "unfamiliar"]);
  });
});
