import fs from "node:fs";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { dataRequest, havePima, randomLabelCsv, startExperimentServer, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 37 items 1, 2 and 4 through the real Python pipeline: the positive class and its sensitivity, specificity,
// PPV and NPV (checked against a confusion matrix this test rebuilds from /predict on the test patients), the
// confusion matrix, and the warnings (random labels must end ready with no_better_than_chance).

vi.setConfig({ testTimeout: 240_000 });

const WDBC = new URL("../../../shared/datasets/wdbc/data.csv", import.meta.url);
const haveData = fs.existsSync(WDBC) && havePima;

describe.skipIf(!haveData)(`clinical figures and warnings on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: { userId: string; key: string };
  let client: Api;
  const wdbc = { path: "", cols: [] as string[] };

  beforeAll(async () => {
    ({ server, user, client } = await startExperimentServer());
    const csv = fs.readFileSync(WDBC, "utf8");
    wdbc.cols = csv.split(/\r?\n/, 1)[0].split(",").slice(2);
    wdbc.path = `${user.userId}/wdbc/data.zip`;
    await server.services.bucket.write(wdbc.path, Readable.from(makeZip({ "data.csv": csv })));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("WDBC with positive_class M reports sensitivity, specificity, PPV and NPV for M, matching the test patients' predictions", async () => {
    expect((await client.post("/v1/experiments", dataRequest(user.userId, 1, wdbc.path, wdbc.cols, { positive_class: "M" }))).status).toBe(
      202,
    );
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.positive_class).toEqual({ index: 1, code: "M", name: "M", rule: "requested" });
    for (const name of ["sensitivity", "specificity", "ppv", "npv", "prevalence", "auc"]) {
      const m = done.metrics[name];
      expect(m.value, name).toBeGreaterThan(0);
      expect(m.ci_low, name).toBeLessThanOrEqual(m.value);
      expect(m.ci_high, name).toBeGreaterThanOrEqual(m.value);
    }
    // The existing names stay.
    for (const name of ["auc", "f_macro", "precision", "recall", "accuracy", "ece"]) expect(done.metrics[name]).toBeDefined();

    // Rebuild the confusion matrix from /predict on every test patient (the split travels with the model as spec.json).
    const spec = JSON.parse(await text(await server.services.bucket.read(`${done.model.store_path}/spec.json`)));
    const test = new Set<string>(spec.split.test);
    const rows = fs
      .readFileSync(WDBC, "utf8")
      .trim()
      .split(/\r?\n/)
      .slice(1)
      .map((l) => l.split(","));
    const counts = { tp: 0, fn: 0, fp: 0, tn: 0 };
    for (const row of rows.filter((r) => test.has(r[0]))) {
      const res = await client.post("/v1/experiments/1/predict", { message: row.slice(2).map(Number) });
      expect(res.status).toBe(201);
      const calledM = res.body.prediccion[1] === 1; // classes sorted: 0 = B, 1 = M
      const isM = row[1] === "M";
      counts[isM ? (calledM ? "tp" : "fn") : calledM ? "fp" : "tn"]++;
    }
    const { tp, fn, fp, tn } = counts;
    expect(tp + fn + fp + tn).toBe(test.size);
    expect(done.confusion_matrix).toEqual({
      labels: ["B", "M"],
      counts: [
        [tn, fp],
        [fn, tp],
      ],
    });
    expect(done.metrics.sensitivity.value).toBeCloseTo(tp / (tp + fn), 5);
    expect(done.metrics.specificity.value).toBeCloseTo(tn / (tn + fp), 5);
    expect(done.metrics.ppv.value).toBeCloseTo(tp / (tp + fp), 5);
    expect(done.metrics.npv.value).toBeCloseTo(tn / (tn + fn), 5);
    expect(done.metrics.prevalence.value).toBeCloseTo((tp + fn) / test.size, 5);
    // Taking B as positive instead is per_class["0"]: its sensitivity is M's specificity.
    expect(done.metrics.sensitivity.per_class["0"].value).toBeCloseTo(tn / (tn + fp), 5);
    // Every warning is well formed; a strong model is not "no better than chance".
    for (const w of done.warnings)
      expect(w).toMatchObject({
        code: expect.any(String),
        severity: expect.stringMatching(/^(severe|caution|info)$/),
        message: expect.any(String),
      });
    expect(done.warnings.map((w: { code: string }) => w.code)).not.toContain("no_better_than_chance");
  });

  it("without positive_class the less frequent class is positive (WDBC: M, 212 of 569)", async () => {
    expect((await client.post("/v1/experiments", dataRequest(user.userId, 2, wdbc.path, wdbc.cols))).status).toBe(202);
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.status).toBe("ready");
    expect(done.positive_class).toMatchObject({ code: "M", rule: "less frequent class" });
  });

  it("random labels end ready, flagged no_better_than_chance (severe)", async () => {
    const { csv, dataCols } = randomLabelCsv();
    const zip = makeZip({ "data.csv": csv });
    const zipPath = `${user.userId}/random/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(zip));
    expect((await client.post("/v1/experiments", dataRequest(user.userId, 3, zipPath, dataCols))).status).toBe(202);
    const done = await waitForStatus(client, 3, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.status).toBe("ready");
    expect(done.metrics.auc.ci_low).toBeLessThanOrEqual(0.5);
    const chance = done.warnings.find((w: { code: string }) => w.code === "no_better_than_chance");
    expect(chance).toMatchObject({ severity: "severe", title: "not better than chance" });
    expect(chance.message).toMatch(/includes 0\.5/);
    expect(done.confusion_matrix.labels).toEqual(["B", "M"]);
  });

  it("a positive_class the label does not hold ends invalid_dataset naming the column and its values", async () => {
    expect(
      (await client.post("/v1/experiments", dataRequest(user.userId, 4, wdbc.path, wdbc.cols, { positive_class: "malignant" }))).status,
    ).toBe(202);
    const done = await waitForStatus(client, 4, ["ready", "failed", "invalid_dataset"], 60_000);
    expect(done.status).toBe("invalid_dataset");
    expect(done.failure_reason).toBe(
      "positive_class 'malignant' is not a value of the label column 'diagnosis'; its values are B, M (write one exactly as in the CSV)",
    );
    expect(done.dataset_report.errors).toContainEqual(expect.objectContaining({ code: "positive_class_not_found", column: "diagnosis" }));
  });

  it("positive_class on a regression request is a 400 naming the field", async () => {
    const res = await client.post(
      "/v1/experiments",
      dataRequest(user.userId, 5, wdbc.path, wdbc.cols, { positive_class: "M", model_type: 1 }),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual(
      expect.objectContaining({ field: "positive_class", message: expect.stringMatching(/binary classification, not regression/) }),
    );
  });
});

async function text(stream: Readable): Promise<string> {
  let out = "";
  for await (const chunk of stream) out += chunk.toString();
  return out;
}
