import fs from "node:fs";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { dataRequest, plantedSites, startExperimentServer, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 37 item 5 through the HTTP API and the real Python pipeline: subgroup_cols on the request, `subgroups` on
// GET /v1/experiments/{id}, the subgroup_worse warning and the model card. The first tests need nothing from
// ../shared (a generated table with a planted worse site); the last one runs on Pima when ../shared/datasets has it.

vi.setConfig({ testTimeout: 240_000 });

const PIMA = new URL("../../../shared/datasets/pima/pima-indians-diabetes.data.csv", import.meta.url);

describe(`subgroup performance on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: { userId: string; key: string };
  let client: Api;
  let zipPath = "";

  beforeAll(async () => {
    ({ server, user, client } = await startExperimentServer());
    zipPath = `${user.userId}/sites/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": plantedSites() })));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("reports each site and age quartile with intervals, flags the planted site, warns, and fills the model card", async () => {
    const body = dataRequest(user.userId, 1, zipPath, ["f1", "f2"], { subgroup_cols: ["site", "age"], positive_class: "M" });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.subgroups.map((c: { column: string; kind: string }) => [c.column, c.kind])).toEqual([
      ["site", "categorical"],
      ["age", "quartiles"],
    ]);
    const [site, age] = done.subgroups;
    const by = Object.fromEntries(site.groups.map((g: { label: string }) => [g.label, g]));
    expect(Object.keys(by)).toEqual(["A", "B", "C"]);
    expect(by.C.flag).toBe("worse");
    expect(by.C.auc.ci_high).toBeLessThan(by.C.rest_auc);
    expect(by.A.flag).toBeNull();
    for (const g of [by.A, by.B]) {
      for (const name of ["auc", "sensitivity", "specificity"]) {
        expect(g[name].ci_low, name).toBeLessThanOrEqual(g[name].value);
        expect(g[name].ci_high, name).toBeGreaterThanOrEqual(g[name].value);
      }
    }
    const testPatients = done.dataset_report.summary.split.test;
    expect(site.groups.reduce((n: number, g: { patients: number }) => n + g.patients, 0)).toBe(testPatients);
    expect(age.groups).toHaveLength(4);
    for (const g of age.groups) {
      expect(g.label).toMatch(/^\d+–\d+$/);
      expect(g.positives).toBeLessThanOrEqual(g.patients);
      expect(g.prevalence).toBeCloseTo(g.positives / g.patients, 5);
    }
    expect(age.groups.reduce((n: number, g: { patients: number }) => n + g.patients, 0)).toBe(testPatients);

    const warning = done.warnings.find((w: { code: string }) => w.code === "subgroup_worse");
    expect(warning).toMatchObject({ severity: "caution", title: "worse in a subgroup" });
    expect(warning.message).toContain("site C");

    const card = await client.get("/v1/experiments/1/model-card");
    expect(card.status).toBe(200);
    expect(card.body.subgroups).toEqual(done.subgroups);
    expect(card.body.calibration.not_yet.join(" ")).not.toMatch(/subgroup/);
    const html = await client.get("/v1/experiments/1/report.html");
    expect(html.body).toContain("Performance by subgroup");
    expect(html.body).toContain("clearly worse than the rest");
    // The summary at the top names the warning, not just a count of them.
    expect(/<b>Warnings:<\/b>([^<]*)/.exec(html.body)?.[1]).toContain("worse in a subgroup");
  });

  it("a Retrospective study with subgroup_cols reports the groups on the new patients (the way to compare sites)", async () => {
    const body = dataRequest(user.userId, 5, zipPath, ["f1", "f2"], {
      study_type: "Retrospective",
      source_experiment_id: 1,
      subgroup_cols: ["site"],
    });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 5, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    const [site] = done.subgroups;
    // Every patient is tested here: 300 per site.
    expect(site.groups.map((g: { label: string; patients: number }) => [g.label, g.patients])).toEqual([
      ["A", 300],
      ["B", 300],
      ["C", 300],
    ]);
    expect(site.groups.map((g: { flag: string | null }) => g.flag)).toEqual([null, null, "worse"]);
  });

  it("a subgroup column the CSV lacks refuses the dataset, naming the column", async () => {
    const body = dataRequest(user.userId, 2, zipPath, ["f1", "f2"], { subgroup_cols: ["scanner"] });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 60_000);
    expect(done.status).toBe("invalid_dataset");
    expect(done.dataset_report.errors).toContainEqual(
      expect.objectContaining({ code: "column_missing", column: "scanner", message: expect.stringContaining("subgroup column 'scanner'") }),
    );
  });

  it("an experiment without subgroup_cols has subgroups null and the model card says they were not computed", async () => {
    const body = dataRequest(user.userId, 3, zipPath, ["f1", "f2"]);
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 3, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.status).toBe("ready");
    expect(done.subgroups).toBeNull();
    const card = await client.get("/v1/experiments/3/model-card");
    expect(card.body.subgroups).toBeNull();
    expect(card.body.calibration.not_yet.join(" ")).toMatch(/figures by subgroup/);
  });

  it.skipIf(!fs.existsSync(PIMA))("Pima with subgroup_cols Age reports four age groups", async () => {
    const cols = ["Pregnancies", "Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI", "DiabetesPedigreeFunction", "Age"];
    const lines = fs.readFileSync(PIMA, "utf8").trim().split(/\r?\n/);
    const csv = [`id,${cols.join(",")},diagnosis`, ...lines.map((l, i) => `${i + 1},${l}`)].join("\n") + "\n";
    const path = `${user.userId}/pima/data.zip`;
    await server.services.bucket.write(path, Readable.from(makeZip({ "data.csv": csv })));
    const body = dataRequest(user.userId, 4, path, cols, { subgroup_cols: ["Age"] });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const done = await waitForStatus(client, 4, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.subgroups).toHaveLength(1);
    const [age] = done.subgroups;
    expect([age.column, age.kind]).toEqual(["Age", "quartiles"]);
    expect(age.groups).toHaveLength(4);
    // Quartiles of the test patients' ages: ordered, non-overlapping ranges, each with figures or too_small.
    const ranges = age.groups.map((g: { label: string }) => g.label.split("–").map(Number));
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThan(ranges[i - 1][1]);
    for (const g of age.groups) {
      expect(g.patients).toBeGreaterThan(10);
      if (g.flag !== "too_small") expect(g.auc.value).toBeGreaterThan(0);
    }
  });
});
