import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { dataRequest, diagnosisRows, waitForStatus, type Api, startExperimentServer } from "./experiments-fixtures.js";

// split_col through the API: the CSV's own train/validation/test column (any case) becomes the experiment's
// patient split exactly, end to end to a published model; a patient split across parts is refused with the row,
// column and patient named. A tabular task with a 4 s budget keeps it quick: the datasets stage is the same for
// every task.

vi.setConfig({ testTimeout: 120_000 });

const PARTS = ["train", "TRAIN", "Train", "train", "train", "train", "Validation", "val", "TEST", "test"];

/** 200 patients, one row each; label from a noisy rule on f1, f2; `ml_use` cycles through PARTS. */
function csvRows(): string[] {
  return diagnosisRows(200, 3, { name: "ml_use", value: (i) => PARTS[i % PARTS.length] });
}

describe(`split_col through the API on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: UserWithKey;
  let client: Api;
  beforeAll(async () => ({ server, user, client } = await startExperimentServer()));
  afterAll(() => server?.teardown());

  async function upload(name: string, rows: string[]): Promise<string> {
    const zipPath = `${user.userId}/split/${name}.zip`;
    const put = await fetch(`${server.url}/v1/files/${zipPath}`, {
      method: "PUT",
      headers: bearer(user.key, { "content-type": "application/zip" }),
      body: makeZip({ "data.csv": rows.join("\n") + "\n" }),
    });
    expect(put.status).toBe(201);
    return zipPath;
  }

  it("the column's parts are the experiment's split, through to the published model", async () => {
    const zipPath = await upload("good", csvRows());
    const post = await client.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, ["f1", "f2"], { split_col: "ml_use" }));
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"]);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.request.split_col).toBe("ml_use");
    expect(done.dataset_report.summary.split).toEqual({ train: 120, val: 40, test: 40, from_column: "ml_use" });

    const ids = (pick: (i: number) => boolean) =>
      Array.from({ length: 200 }, (_, i) => i)
        .filter(pick)
        .map((i) => String(1000 + i));
    const row = await server.services.experiments.get(user.scope, 1);
    expect(row.split).toEqual({
      seed: expect.any(Number),
      train: ids((i) => i % 10 < 6),
      val: ids((i) => i % 10 === 6 || i % 10 === 7),
      test: ids((i) => i % 10 >= 8),
    });
    const manifest = (await server.services.serving.repo.latest(user.userId, 1))!.manifest as any;
    expect(manifest.provenance.split_counts).toEqual({ train: 120, val: 40, test: 40 });
  });

  it("a patient whose rows name two parts: invalid_dataset naming the row, the column and the patient", async () => {
    const rows = csvRows();
    rows.push(rows[1].replace(/,train$/, ",test")); // patient 1000 again, now in test
    const zipPath = await upload("mixed", rows);
    const post = await client.post("/v1/experiments", dataRequest(user.userId, 2, zipPath, ["f1", "f2"], { split_col: "ml_use" }));
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"]);
    expect(done.status).toBe("invalid_dataset");
    const err = done.dataset_report.errors.find((e: { code: string }) => e.code === "split_patient_mixed");
    expect(err).toMatchObject({ row: 202, column: "ml_use" });
    expect(err.message).toContain("patient '1000' is in train on row 2 but in test on row 202");
  });

  it("refuses split_col on a Retrospective study and names the field", async () => {
    const res = await client.post("/v1/experiments", {
      ...dataRequest(user.userId, 3, `${user.userId}/split/good.zip`, ["f1", "f2"], { split_col: "ml_use" }),
      study_type: "Retrospective",
      source_experiment_id: 1,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ field: expect.stringMatching(/(^|\.)split_col$/) })]);
  });
});
