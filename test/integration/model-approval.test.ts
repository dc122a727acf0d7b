// Issue 50 item 4, a second pair of eyes, end to end over HTTP on PGlite: with approval on, a model version answers
// its builder's key at once and another member's key only after a reviewer or owner who did not build it approves
// it; a new operating point (a new version) needs approval again; with approval off everyone is answered.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { apiKeys } from "../../src/db/schema.js";
import { WorkspaceMemberRepository, WorkspaceRepository } from "../../src/workspaces/workspace.repository.js";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { api, type Api } from "./experiments-fixtures.js";

vi.setConfig({ testTimeout: 60_000 });

/** Validation and test scores with their truth, as a pipeline leaves them, so the real operating-point service can run. */
function operatingScores(): string {
  const pairs = (n: number, shift: number) => {
    const score: number[] = [];
    const label: number[] = [];
    for (let i = 0; i < n; i++) {
      const y = i % 2;
      label.push(y);
      score.push(Math.min(0.99, Math.max(0.01, (y ? 0.6 : 0.35) + (((i * 37 + shift) % 29) - 14) / 60)));
    }
    return { score, label };
  };
  const test = pairs(80, 5);
  return JSON.stringify({
    schema_version: 1,
    positive_index: 1,
    validation: { source: "validation split", ...pairs(120, 0) },
    test: { ...test, patient: test.score.map((_, i) => i) },
  });
}

describe.skipIf(!haveFixturePython)("model approval (a second pair of eyes)", () => {
  let server: TestServer;
  let dataDir = "";
  let ana: UserWithKey, ben: UserWithKey, cy: UserWithKey;
  let asAna: Api, asBen: Api, asCy: Api;
  let ws = "";
  const row = [54, "F", 27.5, "north"];
  const predict = (client: Api) => client.post("/v1/experiments/1/predict", { message: row });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-approval-"));
    server = await startTestServer("pglite", { BUILDER_DATA_DIR: dataDir });
    const { db, bucket } = server.services;
    ana = await createUserWithKey(server, { email: "ana@approval.example" });
    ben = await createUserWithKey(server, { email: "ben@approval.example" });
    cy = await createUserWithKey(server, { email: "cy@approval.example" });
    ws = (await new WorkspaceRepository(db).personalWorkspaceId(ana.userId))!;
    // Ben a viewer and Cy a reviewer of Ana's workspace, their keys acting in it (the members API is another helper's).
    await new WorkspaceMemberRepository(db).add(ws, ben.userId, "viewer");
    await new WorkspaceMemberRepository(db).add(ws, cy.userId, "reviewer");
    for (const u of [ben, cy]) await db.update(apiKeys).set({ workspaceId: ws }).where(eq(apiKeys.id, u.keyId));
    asAna = api(server.url, ana.key);
    asBen = api(server.url, ben.key);
    asCy = api(server.url, cy.key);

    // Ana's binary table model, with the scores an operating point is chosen on.
    const fixture = servingFixtures();
    const modelDir = path.join(dataDir, "fixture");
    fs.mkdirSync(modelDir);
    fs.copyFileSync(path.join(fixture.modelDir("tabular_binary"), "model.onnx"), path.join(modelDir, "model.onnx"));
    const manifest = JSON.parse(fs.readFileSync(path.join(fixture.modelDir("tabular_binary"), "manifest.json"), "utf8"));
    fs.writeFileSync(path.join(modelDir, "manifest.json"), JSON.stringify({ ...manifest, operating_scores_file: "operating_scores.json" }));
    const published = await publishFixture(server, ana.userId, 1, modelDir);
    await bucket.write(`${published.storePath}operating_scores.json`, Readable.from([Buffer.from(operatingScores())]));
  });
  afterAll(async () => {
    await server?.teardown();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("off by default: every member's key is answered, and only an owner may turn it on", async () => {
    expect((await predict(asAna)).status).toBe(201);
    expect((await predict(asBen)).status).toBe(201);
    const state = await asBen.get("/v1/experiments/1/approval");
    expect(state.body).toMatchObject({ version: 1, required: false, approved: false, can_approve: false, built_by_you: false });
    const refused = await asCy.patch(`/v1/workspaces/${ws}/settings`, { require_approval: true });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("missing_permission_workspace_settings");
    const on = await asAna.patch(`/v1/workspaces/${ws}/settings`, { require_approval: true });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ id: ws, require_approval: true });
  });

  it("on: the builder's key is answered, another member's key is refused with who must approve, in English and Spanish", async () => {
    expect((await predict(asAna)).status).toBe(201);
    const refused = await predict(asBen);
    expect(refused.status).toBe(403);
    // The seed's failed-prediction body: error 1, with code and message beside it.
    expect(refused.body).toMatchObject({ error: 1, code: "model_version_not_approved" });
    expect(refused.body.message).toMatch(
      /version 1 of experiment 1 is not approved.*a reviewer or an owner of the workspace who did not build it/,
    );
    const es = await fetch(`${server.url}/v1/experiments/1/predict`, {
      method: "POST",
      headers: { authorization: `Bearer ${ben.key}`, "content-type": "application/json", "accept-language": "es" },
      body: JSON.stringify({ message: row }),
    });
    expect(es.status).toBe(403);
    expect(((await es.json()) as { message: string }).message).toMatch(/no está aprobada.*un revisor o un propietario/);
    // The seed's form of /predict obeys the same rule.
    const seedForm = await asBen.post("/predict", { message: row, experiment_id: 1 });
    expect(seedForm.status).toBe(403);
  });

  it("a viewer cannot approve, nor the builder their own version; a reviewer can, and then every key is answered", async () => {
    const viewer = await asBen.post("/v1/experiments/1/approval", { intended_use: "triage" });
    expect(viewer.status).toBe(403);
    expect(viewer.body.error.code).toBe("missing_permission_model_approve");
    const own = await asAna.post("/v1/experiments/1/approval", { intended_use: "triage" });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("model_version_own_approval");
    expect(own.body.error.message).toMatch(/you cannot approve it yourself.*second pair of eyes/);
    expect((await asCy.get("/v1/experiments/1/approval")).body).toMatchObject({ can_approve: true, approved: false });
    expect((await asCy.post("/v1/experiments/1/approval", { intended_use: "   " })).status).toBe(400);

    const ok = await asCy.post("/v1/experiments/1/approval", { intended_use: "Triage of adult outpatients; not for diagnosis" });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body).toMatchObject({
      version: 1,
      approved: true,
      approved_by: cy.email,
      intended_use: "Triage of adult outpatients; not for diagnosis",
    });
    expect((await predict(asBen)).status).toBe(201);
    const again = await asCy.post("/v1/experiments/1/approval", { intended_use: "other" });
    expect(again.status).toBe(409);

    const versions = await asAna.get("/v1/models/1/versions");
    expect(versions.body.data[0].approval).toMatchObject({
      approved_by: cy.email,
      former_member: false,
      intended_use: "Triage of adult outpatients; not for diagnosis",
    });
    // The model card says it (the card is the builder's: read with Ana's key).
    const card = await asAna.get("/v1/experiments/1/model-card");
    expect(card.status).toBe(200);
    expect(card.body.approval).toMatchObject({
      approved: true,
      approved_by: cy.email,
      intended_use: "Triage of adult outpatients; not for diagnosis",
    });
    const html = await (
      await fetch(`${server.url}/v1/experiments/1/report.html`, { headers: { authorization: `Bearer ${ana.key}` } })
    ).text();
    expect(html).toMatch(/Approved by cy@approval\.example on \d{4}-\d{2}-\d{2} \(version 1\) for:/);
    const audit = await server.services.audit.list(ana.scope, { limit: 20, offset: 0 });
    expect(JSON.stringify(audit)).toMatch(/"model_version_approved".*"experiment 1"/);
  });

  it("a new operating point is a new version: refused again until approved; approval off answers everyone", async () => {
    const saved = await asAna.post("/v1/models/1/operating-point", { rule: "youden" });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body).toMatchObject({ version: 2, approval: null });
    expect((await asAna.get("/v1/experiments/1/model-card")).body.approval).toMatchObject({ required: true, approved: false });
    expect((await predict(asAna)).status).toBe(201);
    const refused = await predict(asBen);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain("version 2");
    expect((await asCy.post("/v1/experiments/1/approval", { intended_use: "Triage, at Youden's threshold" })).status).toBe(201);
    expect((await predict(asBen)).status).toBe(201);

    expect((await asAna.post("/v1/models/1/operating-point", { rule: "f1" })).status).toBe(201);
    expect((await predict(asBen)).status).toBe(403);
    expect((await asAna.patch(`/v1/workspaces/${ws}/settings`, { require_approval: false })).status).toBe(200);
    expect((await predict(asBen)).status).toBe(201);
    expect((await predict(asCy)).status).toBe(201);
  });
});
