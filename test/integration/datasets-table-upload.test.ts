import fs from "node:fs";
import path from "node:path";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { storedFiles } from "../helpers/storage.js";
import { dataRequest, diagnosisRows, waitForStatus, type Api, startExperimentServer } from "./experiments-fixtures.js";

// A bare .csv or .xlsx for a data task, uploaded as it is (issue 38 item 4: "a bare .csv upload — what a clinician
// tries first — is refused"). The server stores a zip holding one CSV and answers with that zip's path and a note;
// both build to ready through the real pipeline. Broken tables get a plain-words 400 and nothing is stored.

vi.setConfig({ testTimeout: 150_000 });

/** The same 120 patients as a CSV text, and as a workbook whose first sheet holds them (numbers as numbers). */
const ROWS = diagnosisRows(120, 11, { name: "age", value: (i) => String(30 + (i % 40)) });

async function workbook(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const sheet = wb.addWorksheet("Patients");
  for (const [i, line] of ROWS.entries()) sheet.addRow(line.split(",").map((v, j) => (i > 0 && j !== 1 ? Number(v) : v)));
  // a formula's cached result is what the CSV gets; a second sheet is listed, not read
  sheet.getCell("F1").value = "f_sum";
  for (let r = 2; r <= ROWS.length; r++)
    sheet.getCell(`F${r}`).value = {
      formula: `C${r}+D${r}`,
      result: Number(sheet.getCell(`C${r}`).value) + Number(sheet.getCell(`D${r}`).value),
    };
  wb.addWorksheet("Notes").addRow(["collected 2019-2021"]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

describe(`bare .csv and .xlsx uploads on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: UserWithKey;
  let client: Api;
  beforeAll(async () => ({ server, user, client } = await startExperimentServer()));
  afterAll(() => server?.teardown());

  const put = (name: string, body: Buffer | string) =>
    fetch(`${server.url}/v1/files/${user.userId}/tables/${name}`, { method: "PUT", headers: bearer(user.key), body });
  /** Names of the objects under a folder of the bucket (the user's tables/ by default), wherever the bucket is. */
  const bucketFiles = async (folder = `${user.userId}/tables/`) =>
    (await storedFiles(server.dataDir, server.services.bucket))
      .filter((f) => f.startsWith(`bucket/${folder}`))
      .map((f) => path.basename(f));

  it("a CSV is stored as a zip of itself, and builds to ready", async () => {
    const res = await put("cohort.csv", ROWS.join("\n") + "\n");
    expect(res.status).toBe(201);
    const body = (await res.json()) as { zip_gcloud: string; converted_from: string; note: string };
    expect(body).toMatchObject({ zip_gcloud: `${user.userId}/tables/cohort.zip`, converted_from: "cohort.csv" });
    expect(body.note).toBe("cohort.csv was stored as the dataset's table, zipped as cohort.zip");

    expect((await client.post("/v1/experiments", dataRequest(user.userId, 1, body.zip_gcloud, ["f1", "f2", "age"]))).status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    // The job took the zip from the bucket and published the model there (S3 in the storage suite's second run);
    // /predict serves it from that copy.
    const published = await bucketFiles(`models/${user.userId}/1/v1/`);
    expect(published).toEqual(expect.arrayContaining(["manifest.json", "model.onnx"]));
    const [f1, f2, age] = ROWS[1].split(",").slice(2).map(Number);
    const scored = await client.post("/v1/experiments/1/predict", { message: [f1, f2, age] });
    expect(scored.status).toBe(201);
  });

  it("an .xlsx gives its first sheet (formulas as their values), says so, and builds to ready", async () => {
    const res = await put("cohort-sheet.xlsx", await workbook());
    expect(res.status).toBe(201);
    const body = (await res.json()) as { zip_gcloud: string; note: string };
    expect(body.zip_gcloud).toBe(`${user.userId}/tables/cohort-sheet.zip`);
    expect(body.note).toContain("its first sheet, “Patients” (120 rows below its header), was stored as cohort-sheet.csv");
    expect(body.note).toContain("the other sheets (“Notes”) were not read");

    const columns = (await client.get(`/v1/datasets/columns?zip_gcloud=${encodeURIComponent(body.zip_gcloud)}`)).body;
    expect(columns.columns.map((c: { name: string }) => c.name)).toEqual(["id", "diagnosis", "f1", "f2", "age", "f_sum"]);
    expect(columns.columns.find((c: { name: string }) => c.name === "f_sum").type).toBe("numeric");

    expect((await client.post("/v1/experiments", dataRequest(user.userId, 2, body.zip_gcloud, ["f1", "f2", "age", "f_sum"]))).status).toBe(
      202,
    );
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
  });

  it("a broken workbook, a binary .csv and an empty one are 400s in plain words; nothing is stored", async () => {
    const before = await bucketFiles();
    const cases: Array<[string, Buffer | string, string]> = [
      ["broken.xlsx", Buffer.from("this is not a workbook at all"), "cannot be read as an Excel workbook (.xlsx)"],
      ["utf16.csv", Buffer.from("\ufeffid,label\n1,a\n", "utf16le"), "is not a text CSV"],
      ["empty.csv", "", "is empty"],
    ];
    for (const [name, bytes, words] of cases) {
      const res = await put(name, bytes);
      expect(res.status, name).toBe(400);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe("invalid_table");
      expect(error.message).toContain(words);
      expect(error.message).not.toMatch(/PK|signature/);
    }
    expect(await bucketFiles()).toEqual(before);
    expect(fs.readdirSync(path.join(server.dataDir, "tmp")).filter((f) => f.startsWith("table-"))).toEqual([]);
  });

  it("a file that is not a zip under a .zip name is refused in plain words", async () => {
    const res = await put("oops.zip", "id,label\n1,a\n");
    expect(res.status).toBe(415);
    const error = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("not_a_zip");
    expect(error.message).not.toMatch(/PK|signature|\\x/);
    expect(error.message).toContain(".csv or .xlsx");
  });
});
