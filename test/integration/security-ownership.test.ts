import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, bearer, type UserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { experimentRequestSchema, requestHash, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";
import { api, dataRequest, diagnosisRows, visionRequest, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 19, finding 1: two users, every route that takes a zip_gcloud, a source_experiment_id, a path, an
// experiment id or a gs:// URI. Bob is refused Alice's things exactly as things that do not exist (404 not_found),
// and a job whose row names another user's zip (however it got there) never reads it.

const ALICE_EXP = 5; // a published tabular model (fixture) with categorical codes
const ALICE_ZIP_EXP = "clinic";

describe.skipIf(!haveFixturePython)("another user's resources are 404 on every route", () => {
  const fx = haveFixturePython ? servingFixtures() : (undefined as never);
  let server: TestServer;
  let alice: UserWithKey & { client: Api };
  let bob: UserWithKey & { client: Api };
  let aliceZip: string;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { JOB_LEASE_S: "2" });
    const a = await createUserWithKey(server);
    const b = await createUserWithKey(server);
    alice = { ...a, client: api(server.url, a.key) };
    bob = { ...b, client: api(server.url, b.key) };
    aliceZip = `${alice.userId}/${ALICE_ZIP_EXP}/phi.zip`;
    const zip = makeZip({ "data.csv": diagnosisRows(60, 3, { name: "full_name", value: (i) => `Patient Name ${i}` }).join("\n") + "\n" });
    const put = await fetch(`${server.url}/v1/files/${aliceZip}`, { method: "PUT", headers: bearer(alice.key), body: zip });
    expect(put.status).toBe(201);
    await publishFixture(server, alice.userId, ALICE_EXP, fx.modelDir("tabular_multiclass"));
  });
  afterAll(async () => {
    await server?.teardown();
  });

  const expectNotFound = (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  };
  // The predict routes answer failures in the seed's shape: error 1, with the code beside it.
  const expectPredictNotFound = (res: { status: number; body: any }) => {
    expect(res.status, JSON.stringify(res.body)).toBe(404);
    expect(res.body).toMatchObject({ error: 1, code: "not_found" });
  };

  it("POST /v1/experiments refuses Alice's zip for Bob (Builder and Retrospective, data and vision, gs:// or bare)", async () => {
    const gs = `gs://${server.services.bucket.name}/${aliceZip}`;
    const bodies = [
      dataRequest(bob.userId, 801, aliceZip, ["f1", "full_name"]),
      dataRequest(bob.userId, 802, gs, ["f1"]),
      visionRequest(bob.userId, 803, aliceZip),
      dataRequest(bob.userId, 804, aliceZip, ["f1"], { study_type: "Retrospective", source_experiment_id: 1 }),
    ];
    // Bob's own experiment 1, so the Retrospective body fails only on the zip.
    await bob.client.post("/v1/experiments", dataRequest(bob.userId, 1, `${bob.userId}/x/none.zip`, ["f1"]));
    for (const body of bodies) expectNotFound(await bob.client.post("/v1/experiments", body));
    // A file of Alice's that exists and one that does not answer alike: existence is not revealed.
    const missing = await bob.client.post("/v1/experiments", dataRequest(bob.userId, 805, `${alice.userId}/nothing/here.zip`, ["f1"]));
    expectNotFound(missing);
    const listed = await bob.client.get("/v1/experiments");
    expect(listed.body.data.map((e: { experiment_id: number }) => e.experiment_id)).toEqual([1]);
    // Alice herself is accepted with the same zip.
    expect(
      (await alice.client.post("/v1/experiments", dataRequest(alice.userId, 801, aliceZip, ["f1", "f2"], { time_budget_s: 4 }))).status,
    ).toBe(202);
    expect((await alice.client.post("/v1/experiments/801/cancel")).status).toBe(202); // no training needed here
  });

  it("POST /v1/experiments refuses a source_experiment_id of Alice's (404, as for one that does not exist)", async () => {
    const bobZip = `${bob.userId}/own/data.zip`;
    const theirs = await bob.client.post(
      "/v1/experiments",
      dataRequest(bob.userId, 810, bobZip, ["f1"], { study_type: "Retrospective", source_experiment_id: ALICE_EXP }),
    );
    expectNotFound(theirs);
    expect(theirs.body.error.details[0].field).toBe("source_experiment_id");
    const none = await bob.client.post(
      "/v1/experiments",
      dataRequest(bob.userId, 811, bobZip, ["f1"], { study_type: "Retrospective", source_experiment_id: 999 }),
    );
    expect(none.status).toBe(404);
    expect(none.body.error.message).toBe(theirs.body.error.message.replace(String(ALICE_EXP), "999"));
  });

  it("a job whose row names Alice's zip fails as 'no file' for Bob, Builder and Retrospective, without reading it", async () => {
    // Rows written straight to the database (as an older server or a direct insert might have): the job checks again.
    const { repo } = server.services.experiments;
    const rows = [
      dataRequest(bob.userId, 820, aliceZip, ["f1", "full_name"]),
      dataRequest(bob.userId, 821, aliceZip, ["f1"], { study_type: "Retrospective", source_experiment_id: 1 }),
    ];
    for (const body of rows) {
      const request = withoutToken(experimentRequestSchema.parse(body));
      const row = await repo.insert({
        userId: bob.userId,
        workspaceId: await personalWorkspaceId(server.services.db, bob.userId),
        experimentId: body.experiment_id,
        request,
        study: studyOf(request, server.services.config),
        requestHash: requestHash(request),
      });
      await server.services.runner!.enqueue(row!.id);
    }
    for (const id of [820, 821]) {
      const done = await waitForStatus(bob.client, id, ["ready", "failed", "invalid_dataset", "cancelled"], 60_000);
      expect(done.status).toBe("failed");
      expect(done.failure_reason).toMatch(/^no file at zip_gcloud/);
      expect(done.dataset_report ?? null).toBeNull();
      expect(done.history.map((h: { status: string }) => h.status)).not.toContain("validating");
    }
  });

  it("files: Bob cannot write, overwrite, delete or list Alice's zip", async () => {
    const zipBytes = makeZip({ "a.csv": "x\n1\n" });
    const put = await fetch(`${server.url}/v1/files/${aliceZip}`, { method: "PUT", headers: bearer(bob.key), body: zipBytes });
    expect(put.status).toBe(404);
    const form = new FormData();
    form.append("path", aliceZip);
    form.append("file", new Blob([zipBytes]), "phi.zip");
    expect((await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(bob.key), body: form })).status).toBe(404);
    const del = await fetch(`${server.url}/v1/files/${aliceZip}`, { method: "DELETE", headers: bearer(bob.key) });
    expect(del.status).toBe(404);
    const bobFiles = (await bob.client.get("/v1/files")).body.files;
    expect(bobFiles).toEqual([]);
    const aliceFiles = (await alice.client.get("/v1/files")).body.files;
    expect(aliceFiles.map((f: { zip_gcloud: string }) => f.zip_gcloud)).toEqual([aliceZip]);
  });

  it("datasets validate and columns refuse Alice's zip for Bob and serve it to Alice", async () => {
    const body = { zip_gcloud: aliceZip, task: "data", label_cols: ["diagnosis"], data_cols: ["f1"] };
    expectNotFound(await bob.client.post("/v1/datasets/validate", body));
    expectNotFound(await bob.client.get(`/v1/datasets/columns?zip_gcloud=${encodeURIComponent(aliceZip)}`));
    expect((await alice.client.post("/v1/datasets/validate", body)).status).toBe(200);
    const cols = await alice.client.get(`/v1/datasets/columns?zip_gcloud=${encodeURIComponent(aliceZip)}`);
    expect(cols.status).toBe(200);
    expect(cols.body.columns.map((c: { name: string }) => c.name)).toContain("full_name");
  });

  it("experiments, models, downloads, logs, events, cancel and predict of Alice's are 404 for Bob", async () => {
    for (const p of [
      `/v1/experiments/${ALICE_EXP}`,
      `/v1/experiments/${ALICE_EXP}/logs`,
      `/v1/experiments/${ALICE_EXP}/events`,
      `/v1/models/${ALICE_EXP}`,
      `/v1/models/${ALICE_EXP}/download`,
      `/v1/experiments/${ALICE_EXP}/model-card`,
      `/v1/experiments/${ALICE_EXP}/report.html`,
    ]) {
      expectNotFound(await bob.client.get(p));
    }
    // The model card exists for Alice (a published fixture model with no dataset report still has one).
    expect((await alice.client.get(`/v1/experiments/${ALICE_EXP}/model-card`)).status).toBe(200);
    expect((await alice.client.get(`/v1/experiments/${ALICE_EXP}/report.html`)).status).toBe(200);
    expectNotFound(await bob.client.post(`/v1/experiments/801/cancel`));
    expectPredictNotFound(await bob.client.post(`/v1/experiments/${ALICE_EXP}/predict`, { message: [1, 2, 3] }));
    expectPredictNotFound(await bob.client.post(`/predict`, { experiment_id: ALICE_EXP, message: [1, 2, 3] }));
    expect((await bob.client.get("/v1/models")).body.data).toEqual([]);
  });

  it("predict with gs:// reads only the caller's own folder in this deployment's bucket", async () => {
    await publishFixture(server, bob.userId, 7, fx.modelDir("vision_binary"));
    const png = fx.image("rgb.png");
    const own = `${bob.userId}/imgs/own.zip`; // the bucket holds uploads only as .zip; the bytes are a PNG
    await server.services.bucket.write(own, (await import("node:stream")).Readable.from([png]));
    await server.services.bucket.write(`${alice.userId}/imgs/theirs.zip`, (await import("node:stream")).Readable.from([png]));
    const bucket = server.services.bucket.name;
    expect((await bob.client.post("/v1/experiments/7/predict", { message: `gs://${bucket}/${own}` })).status).toBe(201);
    expectPredictNotFound(
      await bob.client.post("/v1/experiments/7/predict", { message: `gs://${bucket}/${alice.userId}/imgs/theirs.zip` }),
    );
    expectPredictNotFound(
      await bob.client.post("/v1/experiments/7/predict", { message: `gs://${bucket}/models/${alice.userId}/${ALICE_EXP}/v1/model.onnx` }),
    );
    expectPredictNotFound(await bob.client.post("/v1/experiments/7/predict", { message: `gs://another-bucket/${own}` }));
  });

  it("GET /v1/models/{id} shows how many categories a text feature has, never its values (they may be identifiers)", async () => {
    const model = await alice.client.get(`/v1/models/${ALICE_EXP}`);
    expect(model.status).toBe(200);
    const site = model.body.inputs.columns.find((c: { name: string }) => c.name === "site");
    expect(site).toEqual({ name: "site", type: "categorical", categories: 3 });
    const text = JSON.stringify(model.body);
    for (const value of ["north", "south", "east"]) expect(text).not.toContain(value);
    // The value as written in the CSV still predicts; a wrong one is refused without listing the right ones.
    const n = model.body.inputs.data_cols.length;
    const row = model.body.inputs.columns.map((c: { type: string; name: string }) =>
      c.name === "site" ? "south" : c.name === "sex" ? "F" : 1,
    );
    expect(row).toHaveLength(n);
    expect((await alice.client.post(`/v1/experiments/${ALICE_EXP}/predict`, { message: row })).status).toBe(201);
    const wrong = await alice.client.post(`/v1/experiments/${ALICE_EXP}/predict`, {
      message: row.map((v: unknown) => (v === "south" ? "nowhere" : v)),
    });
    expect(wrong.status).toBe(400);
    for (const value of ["north", "south", "east"]) expect(JSON.stringify(wrong.body)).not.toContain(value);
    expect(JSON.stringify(wrong.body)).toMatch(/not one of the 3 categories/);
  });
});
