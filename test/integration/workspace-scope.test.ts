// Issue 50: a request acts in one workspace (X-Builder-Workspace for a session, the key's own for an API key), and
// what it reads and writes is that workspace's, with the member's role checked in the services. Two users on one
// server: A's shared workspace, B a viewer then an editor there, C no member at all.
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys, experiments, models, workspaces } from "../../src/db/schema.js";
import { WorkspaceMemberRepository } from "../../src/workspaces/workspace.repository.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { fixtureRequest } from "../fixtures/serving/publish.js";
import { dataRequest } from "./experiments-fixtures.js";

describe.skipIf(!haveFixturePython)("workspace scope", () => {
  let server: TestServer;
  let a: UserWithKey;
  let b: UserWithKey;
  let c: UserWithKey;
  let shared: string;
  /** B's dashboard session: cookie and CSRF token. */
  let bSession: Record<string, string>;
  let cSession: Record<string, string>;

  const signIn = async (u: UserWithKey) => {
    const res = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: u.email, password: u.password }),
    });
    const { csrf_token } = (await res.json()) as { csrf_token: string };
    return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": csrf_token, "content-type": "application/json" };
  };
  const call = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${server.url}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
  };
  const inShared = (session: Record<string, string>) => ({ ...session, "x-builder-workspace": shared });

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    a = await createUserWithKey(server);
    b = await createUserWithKey(server);
    c = await createUserWithKey(server);
    const { db, bucket } = server.services;
    // The members routes are another area's: the workspace and its members are written through the repository here.
    [{ id: shared }] = await db.insert(workspaces).values({ name: "Cardiology" }).returning({ id: workspaces.id });
    const members = new WorkspaceMemberRepository(db);
    await members.add(shared, a.userId, "owner");
    await members.add(shared, b.userId, "viewer");
    // A's published model in the shared workspace, its files under the workspace's own prefix (its id).
    const modelDir = servingFixtures().modelDir("tabular_binary");
    const storePath = `models/${shared}/1/v1`;
    for (const f of ["model.onnx", "manifest.json"]) await bucket.uploadFile(path.join(modelDir, f), `${storePath}/${f}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, "manifest.json"), "utf8"));
    const [exp] = await db
      .insert(experiments)
      .values({
        userId: a.userId,
        workspaceId: shared,
        experimentId: 1,
        request: { ...fixtureRequest(a.userId, 1, manifest), zip_gcloud: `${shared}/study/data.zip` },
        requestHash: "shared-1",
        status: "ready",
        name: "Shared cohort",
      })
      .returning();
    await db.insert(models).values({
      userId: a.userId,
      workspaceId: shared,
      experimentUuid: exp.id,
      experimentId: 1,
      version: 1,
      kind: manifest.kind,
      storePath,
      manifest,
    });
    bSession = await signIn(b);
    cSession = await signIn(c);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("a viewer reads the workspace's experiment and model, and is refused deleting and building with the permission's code", async () => {
    const got = await call("GET", "/v1/experiments/1", inShared(bSession));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ experiment_id: 1, status: "ready" });
    expect((await call("GET", "/v1/experiments", inShared(bSession))).body.data.map((e: any) => e.experiment_id)).toEqual([1]);
    expect((await call("GET", "/v1/models/1", inShared(bSession))).status).toBe(200);

    const del = await call("DELETE", "/v1/experiments/1", inShared(bSession));
    expect(del.status).toBe(403);
    expect(del.body.error.code).toBe("missing_permission_experiment_delete");
    const build = await call("POST", "/v1/experiments", inShared(bSession), dataRequest(b.userId, 2, `${shared}/study/data.zip`, ["f1"]));
    expect(build.status).toBe(403);
    expect(build.body.error.code).toBe("missing_permission_experiment_build");
    // Still there, untouched.
    expect((await call("GET", "/v1/experiments/1", inShared(bSession))).body.status).toBe("ready");
  });

  it("B's personal workspace does not see it, nor does another user's: 404 as a missing one", async () => {
    expect((await call("GET", "/v1/experiments/1", bSession)).status).toBe(404);
    expect((await call("GET", "/v1/experiments", bSession)).body.total).toBe(0);
    expect((await call("GET", "/v1/experiments/1", cSession)).status).toBe(404);
    // The header is ignored for an API key: B's key acts in B's personal workspace.
    expect((await fetch(`${server.url}/v1/experiments/1`, { headers: bearer(b.key, { "x-builder-workspace": shared }) })).status).toBe(404);
  });

  it("a user who is not a member of the workspace named gets 404 workspace_not_found, as does a malformed id", async () => {
    const outsider = await call("GET", "/v1/experiments", inShared(cSession));
    expect(outsider.status).toBe(404);
    expect(outsider.body.error.code).toBe("workspace_not_found");
    expect((await call("GET", "/v1/experiments", { ...cSession, "x-builder-workspace": "not-a-uuid" })).body.error.code).toBe(
      "workspace_not_found",
    );
  });

  it("what cannot carry a header (an event stream, a link to report.html) names the workspace by cookie; the header wins", async () => {
    const byCookie = (session: Record<string, string>, id: string) => ({
      ...session,
      cookie: `${session.cookie}; builder_workspace=${id}`,
    });
    expect((await call("GET", "/v1/experiments/1", byCookie(bSession, shared))).body).toMatchObject({ experiment_id: 1, status: "ready" });
    const report = await fetch(`${server.url}/v1/experiments/1/report.html`, { headers: byCookie(bSession, shared) });
    expect(report.status).toBe(200);
    // An experiment's live events, as the dashboard's EventSource opens them (cookies only).
    const events = await fetch(`${server.url}/v1/experiments/1/events`, {
      headers: { ...byCookie(bSession, shared), accept: "text/event-stream" },
    });
    expect(events.status).toBe(200);
    await events.body?.cancel();
    // The header wins over the cookie: B's personal workspace has no experiment 1.
    expect(
      (await call("GET", "/v1/experiments/1", { ...byCookie(bSession, shared), "x-builder-workspace": b.scope.workspace.id })).status,
    ).toBe(404);
    // A cookie is checked like the header: C is no member.
    expect((await call("GET", "/v1/experiments", byCookie(cSession, shared))).body.error.code).toBe("workspace_not_found");
  });

  it("the keys page makes a key in the workspace it shows: an owner's predicts with the workspace's model, a viewer may not make one", async () => {
    const refused = await call("POST", "/v1/api-keys", inShared(bSession), { name: "ward program", scopes: ["predict"] });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("missing_permission_key_manage");
    const aSession = await signIn(a);
    const made = await call("POST", "/v1/api-keys", inShared(aSession), { name: "ward program", scopes: ["predict"] });
    expect(made.status).toBe(201);
    const answer = await fetch(`${server.url}/v1/experiments/1/predict`, {
      method: "POST",
      headers: bearer(made.body.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: [63, 1, 27.5, 2] }), // the tabular_binary fixture's four columns
    });
    expect(answer.status).toBe(201);
    // Listed in the shared workspace's keys page, not in A's personal one.
    const listed = (session: Record<string, string>) => call("GET", "/v1/api-keys", session);
    expect((await listed(inShared(aSession))).body.data.map((k: any) => k.id)).toEqual([made.body.id]);
    expect((await listed(aSession)).body.data.map((k: any) => k.id)).not.toContain(made.body.id);
  });

  it("a key of the workspace predicts with its model; the member's new role reaches the cached key at once", async () => {
    const { db } = server.services;
    // B's key moved into the shared workspace (the keys page of the key-scopes area makes such keys).
    await db.update(apiKeys).set({ workspaceId: shared }).where(eq(apiKeys.id, b.keyId));
    const predict = async () =>
      fetch(`${server.url}/v1/experiments/1/predict`, {
        method: "POST",
        headers: bearer(b.key, { "content-type": "application/json" }),
        body: JSON.stringify({ message: [63, 1, 27.5, 2] }), // the tabular_binary fixture's four columns
      });
    // The key's cached entry (B's personal workspace, from the test before) is dropped by the move's trigger.
    let first = 0;
    for (let i = 0; i < 50 && first !== 201; i++) {
      first = (await predict()).status;
      if (first !== 201) await new Promise((r) => setTimeout(r, 50));
    }
    expect(first).toBe(201);
    const viaKey = await fetch(`${server.url}/v1/experiments`, {
      method: "POST",
      headers: bearer(b.key, { "content-type": "application/json" }),
      body: JSON.stringify(dataRequest(b.userId, 3, `${shared}/study/data.zip`, ["f1"])),
    });
    expect(viaKey.status).toBe(403);
    // Made an editor: the trigger on workspace_members drops the key's cached entry (with its role) everywhere.
    await new WorkspaceMemberRepository(db).setRole(shared, b.userId, "editor");
    let status = 0;
    for (let i = 0; i < 50 && status !== 202; i++) {
      const res = await fetch(`${server.url}/v1/experiments`, {
        method: "POST",
        headers: bearer(b.key, { "content-type": "application/json" }),
        body: JSON.stringify(dataRequest(b.userId, 3, `${shared}/study/data.zip`, ["f1"])),
      });
      status = res.status;
      if (status !== 202) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(202);
  });

  it("as an editor B builds in the shared workspace: the row is the workspace's, built by B, its number the workspace's own", async () => {
    const built = await call("POST", "/v1/experiments", inShared(bSession), dataRequest(b.userId, 4, `${shared}/study/data.zip`, ["f1"]));
    expect(built.status).toBe(202);
    const rows = await server.services.db.select().from(experiments).where(eq(experiments.workspaceId, shared));
    expect(rows.find((r) => r.experimentId === 4)).toMatchObject({ userId: b.userId, workspaceId: shared });
    // experiment_id is unique within a workspace: B's personal workspace may use 1 although the shared one has it.
    const own = await call("POST", "/v1/experiments", bSession, dataRequest(b.userId, 1, `${b.userId}/study/data.zip`, ["f1"]));
    expect(own.status).toBe(202);
    // A zip under another workspace's prefix is not found (404), as another user's was.
    const foreign = await call(
      "POST",
      "/v1/experiments",
      inShared(bSession),
      dataRequest(b.userId, 5, `${b.userId}/study/data.zip`, ["f1"]),
    );
    expect(foreign.status).toBe(404);
    // A batch on A's model: its results under the workspace's prefix, readable by the workspace, not by B's own one.
    const sent = await fetch(`${server.url}/v1/models/1/batch`, {
      method: "POST",
      headers: { ...inShared(bSession), "content-type": "text/csv" },
      body: "patient_id,bmi,site,age,sex\nP1,27.5,north,63,F\nP2,31.0,south,40,M\n",
    });
    expect(sent.status).toBe(202);
    const batchId = ((await sent.json()) as { batch_id: string }).batch_id;
    let batch: any;
    for (let i = 0; i < 100 && batch?.status !== "done" && batch?.status !== "failed"; i++) {
      batch = (await call("GET", `/v1/batches/${batchId}`, inShared(bSession))).body;
      if (batch.status !== "done") await new Promise((r) => setTimeout(r, 100));
    }
    expect(batch).toMatchObject({ status: "done", total: 2 });
    expect(await server.services.bucket.stat(`${shared}/batches/${batchId}/results.csv`)).toBeTruthy();
    expect((await call("GET", `/v1/batches/${batchId}`, bSession)).status).toBe(404);
    // An editor deletes what the workspace made.
    expect((await call("DELETE", "/v1/experiments/4", inShared(bSession))).status).toBe(202);
  });
});
