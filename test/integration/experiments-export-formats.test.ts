import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { makeZip } from "../helpers/zips.js";
import type { TestServer } from "../helpers/server.js";
import { dataRequest, diagnosisRows, startExperimentServer, waitForStatus, type Api } from "./experiments-fixtures.js";

// Tables as statistics packages write them, through the real Python pipeline to a published model:
// - R's write.csv (and pandas' to_csv with its index): column 1, the row names, has an empty name; every string is
//   quoted; unknown values are NA. Builder names column 1 'patient_id' and warns instead of refusing the file.
// - a tab-separated export (R's write.table, a spreadsheet's "text" format) with decimal commas.

vi.setConfig({ testTimeout: 180_000 });

/** diagnosisRows' table as R's write.csv writes it: "" for column 1's name, quoted row names and strings. */
function rWriteCsv(): string {
  const [header, ...rows] = diagnosisRows(200, 5, { name: "stage", value: (i) => (i % 7 === 3 ? "NA" : i % 2 ? "early" : "late") });
  const quote = (v: string) => (/^[\d.]+$/.test(v) || v === "NA" ? v : `"${v}"`);
  const lines = [
    `"",${header
      .split(",")
      .map((h) => `"${h}"`)
      .join(",")}`,
  ];
  rows.forEach((line, i) => lines.push(`"${i + 1}",${line.split(",").map(quote).join(",")}`));
  return lines.join("\n") + "\n";
}

/** diagnosisRows' table tab-separated, with decimal commas (a spreadsheet's export where ',' is the decimal mark). */
function tabSeparated(): string {
  const rows = diagnosisRows(200, 9, { name: "lab", value: (_i, rand) => (rand() * 3).toFixed(2) });
  return (
    rows
      .map((line) =>
        line
          .split(",")
          .map((v) => v.replace(".", ","))
          .join("\t"),
      )
      .join("\r\n") + "\r\n"
  );
}

describe("tables from R and from spreadsheets' text exports, end to end", () => {
  let server: TestServer;
  let client: Api;
  let userId: string;

  beforeAll(async () => {
    const started = await startExperimentServer();
    ({ server, client } = started);
    userId = started.user.userId;
    await server.services.bucket.write(`${userId}/r/data.zip`, Readable.from(makeZip({ "wdbc_r.csv": rWriteCsv() })));
    await server.services.bucket.write(`${userId}/tab/data.zip`, Readable.from(makeZip({ "export.csv": tabSeparated() })));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("trains on R's write.csv file, calling its unnamed column 1 the patient id", async () => {
    // The request names the other columns as the user sees them; R's row names are never named.
    expect((await client.post("/v1/experiments", dataRequest(userId, 41, `${userId}/r/data.zip`, ["f1", "f2", "stage"]))).status).toBe(202);
    const done = await waitForStatus(client, 41, ["ready", "failed", "invalid_dataset"], 150_000);
    expect(done.dataset_report.errors).toEqual([]);
    expect(done.status).toBe("ready");
    const unnamed = done.dataset_report.warnings.find((w: { code: string }) => w.code === "csv_id_unnamed");
    expect(unnamed).toMatchObject({ row: 1, column: "patient_id" });
    expect(unnamed.message).toContain("write.csv");
    expect(done.dataset_report.summary.patients).toBe(200);
    expect(done.metrics.auc.value).toBeGreaterThan(0.75);
    const pred = await client.post("/v1/experiments/41/predict", { message: [9.5, 4.5, "late"] });
    expect(pred.status).toBe(201);
    expect(pred.body.error).toBe(0);
  });

  it("trains on a tab-separated file with decimal commas, reading them as numbers", async () => {
    expect((await client.post("/v1/experiments", dataRequest(userId, 42, `${userId}/tab/data.zip`, ["f1", "f2", "lab"]))).status).toBe(202);
    const done = await waitForStatus(client, 42, ["ready", "failed", "invalid_dataset"], 150_000);
    expect(done.dataset_report.errors).toEqual([]);
    expect(done.status).toBe("ready");
    expect(done.dataset_report.summary.delimiter).toBe("\t");
    const features = done.dataset_report.summary.features.map((f: { name: string; type: string }) => [f.name, f.type]);
    expect(features).toEqual([
      ["f1", "numeric"],
      ["f2", "numeric"],
      ["lab", "numeric"],
    ]);
    expect(done.metrics.auc.value).toBeGreaterThan(0.75);
    const model = await client.get("/v1/models/42");
    expect(model.body.inputs.columns.map((c: { type: string }) => c.type)).toEqual(["numeric", "numeric", "numeric"]);
  });
});
