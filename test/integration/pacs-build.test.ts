import { sql } from "drizzle-orm";
import yauzl from "yauzl";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { patientStrata, splitPatients } from "../../src/datasets/split.js";
import { newUid } from "../../src/dicom/write.js";
import { SEED } from "../../src/jobs/spec.js";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistDicom, breastMnistLabelled } from "../helpers/breastmnist-dicom.js";
import { primaryTarget } from "../helpers/db.js";
import { haveOrthanc, startOrthanc, type StoredInstance, type TestOrthanc } from "../helpers/orthanc.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { readObject } from "../helpers/storage.js";
import { api, visionRequest, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 51's first "done when": 200 BreastMNIST images stored in a real Orthanc as DICOM (100 patients, one study of
// two images each); a CSV of their UIDs and labels (most rows an instance UID, some patients by their study UID)
// becomes a dataset by POST /v1/datasets/from-pacs, and an experiment built from it reaches ready with the split an
// upload of the same table gets (patient-grouped, seeded, stratified). Then /predict on a new instance's WADO-RS
// URL answers 201. The pipeline is the real one with a small budget: plumbing, not model quality.

vi.setConfig({ testTimeout: 600_000, hookTimeout: 120_000 });
const PATIENTS = 100;
const BY_STUDY = 10; // the last ten patients are named by their study UID, the rest image by image

async function unzipCsv(bytes: Buffer): Promise<string> {
  const zip = await new Promise<yauzl.ZipFile>((res, rej) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (e, z) => (e ? rej(e) : res(z!))),
  );
  return new Promise<string>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) => {
      if (entry.fileName !== "dataset.csv") return zip.readEntry();
      zip.openReadStream(entry, async (err, s) => {
        if (err || !s) return reject(err);
        const chunks: Buffer[] = [];
        for await (const c of s) chunks.push(c as Buffer);
        resolve(Buffer.concat(chunks).toString("utf8"));
        zip.close();
      });
    });
    zip.on("end", () => reject(new Error("no dataset.csv in the zip")));
    zip.on("error", reject);
    zip.readEntry();
  });
}

describe.skipIf(!haveOrthanc)(`an experiment built from a CSV of PACS UIDs on ${primaryTarget()}`, () => {
  let server: TestServer;
  let orthanc: TestOrthanc;
  let user: UserWithKey;
  let client: Api;
  const patients: Array<{ labels: string[]; images: StoredInstance[] }> = [];

  beforeAll(async () => {
    orthanc = await startOrthanc();
    server = await startTestServer(primaryTarget(), { FETCH_ALLOW_HOSTS: "127.0.0.1" });
    user = await createUserWithKey(server);
    client = api(server.url, user.key);
    for (let p = 0; p < PATIENTS; p++) {
      const [study, series] = [newUid(), newUid()];
      const entry: (typeof patients)[number] = { labels: [], images: [] };
      for (let k = 0; k < 2; k++) {
        const { pixels, label } = await breastMnistLabelled(2 * p + k);
        const source = await breastMnistDicom(
          2 * p + k,
          { name: `Paciente^${p}`, id: `HC-${p}` },
          { study, series, number: k + 1, pixels },
        );
        entry.images.push(await orthanc.store(source.bytes));
        entry.labels.push(label ? "benign" : "malignant");
      }
      patients.push(entry);
    }
  });
  afterAll(async () => {
    await server?.teardown();
    await orthanc?.stop();
  });

  it("imports 200 instances by their UIDs and builds a model to ready with an upload's split rules", async () => {
    expect(
      (await client.put("/v1/pacs", { dicomweb_url: orthanc.dicomWeb, username: orthanc.username, password: orthanc.password })).status,
    ).toBe(200);
    const lines = ["uid,label,site"];
    patients.forEach((p, i) => {
      const site = i % 3 ? "north" : "south";
      // A study takes one label for both its images: the first one's.
      if (i >= PATIENTS - BY_STUDY) lines.push(`${p.images[0].study},${p.labels[0]},${site}`);
      else p.images.forEach((s, k) => lines.push(`${s.instance},${p.labels[k]},${site}`));
    });
    const zipPath = `${user.userId}/breast-pacs/dataset.zip`;
    const started = Date.now();
    const imported = await client.post("/v1/datasets/from-pacs", {
      csv: lines.join("\n") + "\n",
      zip_gcloud: zipPath,
      label_cols: ["label"],
      subgroup_cols: ["site"],
    });
    const importMs = Date.now() - started;
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect(imported.body).toMatchObject({ rows: PATIENTS * 2 - BY_STUDY, instances: PATIENTS * 2, failed: [] });
    expect(imported.body.report.valid).toBe(true);
    expect(imported.body.report.summary).toMatchObject({ images: PATIENTS * 2, patients: PATIENTS });
    console.log(`pacs-build: imported ${imported.body.instances} instances in ${importMs} ms`);

    const post = await client.post(
      "/v1/experiments",
      visionRequest(user.userId, 1, zipPath, { images_col: imported.body.images_col, subgroup_cols: ["site"], time_budget_s: 5 }),
    );
    expect(post.status, JSON.stringify(post.body)).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 540_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.model.kind).toBe("vision_classification");

    // The split is the one an upload of the same table gets: the zip's rows (patient, label) through the same rules.
    const csv = (await unzipCsv(await readObject(server.services.bucket, zipPath))).trim().split("\n");
    expect(csv[0]).toBe("patient_id,image,label,site");
    const rows = csv.slice(1).map((l) => {
      const [patient, , label] = l.split(",");
      return { patient, label };
    });
    const expected = splitPatients(patientStrata(rows), SEED);
    const stored = (await server.services.db.execute(sql`select split from experiments where experiment_id = 1`)) as any;
    const split = ((stored.rows ?? stored) as Array<{ split: any }>)[0].split;
    const sorted = (s: { train: string[]; val: string[]; test: string[] }) => ({
      train: [...s.train].sort(),
      val: [...s.val].sort(),
      test: [...s.test].sort(),
    });
    expect(sorted(split)).toEqual(sorted(expected));
    expect(split.train.length + split.val.length + split.test.length).toBe(PATIENTS);
    expect(split.test.length).toBeGreaterThan(0);

    // A new instance of the PACS, predicted from its WADO-RS URL with the model built from the PACS.
    const fresh = await orthanc.store((await breastMnistDicom(3)).bytes);
    const pred = await client.post("/predict?experiment_id=1", { message: fresh.url });
    expect(pred.status, JSON.stringify(pred.body)).toBe(201);
    expect(pred.body.error).toBe(0);
  });
});
