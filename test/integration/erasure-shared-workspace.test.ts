// Issue 50 item 6: erasing a member erases their personal workspace and their account, while what they built in a
// shared workspace stays with it, attributed to a former member without their e-mail. A and B share a workspace; B
// builds there and in B's personal one; B's account is erased through the real path (services.erasure.begin, what
// DELETE /v1/me and the CLI call).
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { experiments, files, models, workspaces } from "../../src/db/schema.js";
import { WorkspaceMemberRepository, WorkspaceRepository } from "../../src/workspaces/workspace.repository.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";
import { bearer, createUserWithKey, personalWorkspaceId, signIn, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { fixtureRequest, publishFixture } from "../fixtures/serving/publish.js";
import { storedFiles } from "../helpers/storage.js";
import { tabularZip, waitFor } from "./experiments-fixtures.js";

vi.setConfig({ testTimeout: 120_000 });

describe.skipIf(!haveFixturePython)("account erasure and shared workspaces", () => {
  const fx = haveFixturePython ? servingFixtures() : (undefined as never);
  let server: TestServer;
  let a: UserWithKey;
  let b: UserWithKey;
  let shared: string;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    a = await createUserWithKey(server);
    b = await createUserWithKey(server);
    const { db } = server.services;
    [{ id: shared }] = await db.insert(workspaces).values({ name: "Cardiology" }).returning({ id: workspaces.id });
    const members = new WorkspaceMemberRepository(db);
    await members.add(shared, a.userId, "owner");
    await members.add(shared, b.userId, "editor");
  });
  afterAll(async () => {
    await server?.teardown();
  });

  /** B's model published in the shared workspace, under the workspace's own prefix, as the publish job does. */
  const publishShared = async () => {
    const { db, bucket } = server.services;
    const modelDir = fx.modelDir("tabular_binary");
    const storePath = `models/${shared}/1/v1`;
    for (const f of ["model.onnx", "manifest.json"]) await bucket.uploadFile(path.join(modelDir, f), `${storePath}/${f}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, "manifest.json"), "utf8"));
    const [exp] = await db
      .insert(experiments)
      .values({
        userId: b.userId,
        workspaceId: shared,
        experimentId: 1,
        request: { ...fixtureRequest(b.userId, 1, manifest), zip_gcloud: `${shared}/study/data.zip` },
        requestHash: "shared-1",
        status: "ready",
        name: "Shared cohort",
      })
      .returning();
    await db.insert(models).values({
      userId: b.userId,
      workspaceId: shared,
      experimentUuid: exp.id,
      experimentId: 1,
      version: 1,
      kind: manifest.kind,
      storePath,
      manifest,
    });
    return exp;
  };

  const predict = (key: string) =>
    fetch(`${server.url}/v1/experiments/1/predict`, {
      method: "POST",
      headers: bearer(key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: fx.expected["tabular_binary/row0"].row }),
    });

  it("the shared experiment, its model, its uploaded file and A's key survive B's erasure; B's personal workspace and keys do not", async () => {
    const { db, bucket, auth, datasets, erasure } = server.services;
    const sharedExp = await publishShared();
    const bShared = { userId: b.userId, workspace: (await new WorkspaceRepository(db).resolve(b.userId, shared))! };
    await datasets.upload(bShared, `${shared}/study/data.zip`, Readable.from(tabularZip().zip));
    // B's own work: a published model and an upload in B's personal workspace (prefix: B's id).
    const personalExp = await publishFixture(server, b.userId, 1, fx.modelDir("tabular_binary"));
    await datasets.upload(b.scope, `${b.userId}/study/data.zip`, Readable.from(tabularZip().zip));
    const bPersonal = await personalWorkspaceId(db, b.userId);
    // Keys of the shared workspace: A's (a program of the team) and B's (B's credential, which must go).
    const aKey = (await auth.apiKeys.create(a.userId, { scopes: ALL_KEY_SCOPES, workspaceId: shared })).key;
    const bKey = (await auth.apiKeys.create(b.userId, { scopes: ALL_KEY_SCOPES, workspaceId: shared })).key;
    expect((await predict(aKey)).status).toBe(201);
    expect((await predict(bKey)).status).toBe(201);
    expect((await predict(b.key)).status).toBe(201); // B's personal model, loaded in the cache
    const before = await fetch(`${server.url}/v1/experiments/1`, { headers: bearer(aKey) });
    expect(await before.json()).toMatchObject({ user_id: b.userId, built_by: b.email });
    // The list says the same ("built by" on the dashboard's experiments list).
    const listed = async () =>
      ((await (await fetch(`${server.url}/v1/experiments`, { headers: bearer(aKey) })).json()) as { data: unknown[] }).data;
    expect(await listed()).toMatchObject([{ experiment_id: 1, built_by: b.email }]);

    const begun = await erasure.begin({ userId: b.userId, via: "session" });
    expect(begun).toEqual({ experiments: 1 }); // the personal one only
    // At once: B's keys are refused everywhere, the shared one included (a credential of B's).
    expect((await predict(bKey)).status).toBe(401);
    expect((await predict(b.key)).status).toBe(401);
    await waitFor(
      "the erasure to finish",
      async () => ((await db.execute(sql`select count(*)::int as n from users where id = ${b.userId}`)) as any).rows[0].n === 0,
      30_000,
      200,
    );

    // The shared workspace keeps what B built: the experiment, its model (serving A's key), the uploaded file.
    const [exp] = await db.select().from(experiments).where(eq(experiments.id, sharedExp.id));
    expect(exp).toMatchObject({ status: "ready", workspaceId: shared, experimentId: 1, userId: null });
    expect(await db.select().from(models).where(eq(models.workspaceId, shared))).toMatchObject([{ userId: null, version: 1 }]);
    expect(await db.select().from(files).where(eq(files.workspaceId, shared))).toMatchObject([
      { userId: null, path: `${shared}/study/data.zip` },
    ]);
    expect((await predict(aKey)).status).toBe(201);
    const after = await fetch(`${server.url}/v1/experiments/1`, { headers: bearer(aKey) });
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ experiment_id: 1, status: "ready", user_id: null, built_by: null });
    expect(await listed()).toMatchObject([{ experiment_id: 1, built_by: null }]);
    expect((await fetch(`${server.url}/v1/experiments/1/model-card`, { headers: bearer(aKey) })).status).toBe(200);
    expect(await bucket.stat(`models/${shared}/1/v1/model.onnx`)).toBeTruthy();
    expect(await bucket.stat(`${shared}/study/data.zip`)).toBeTruthy();

    // B's personal workspace is gone with everything in it: rows, objects, the model from the cache.
    expect(await db.select().from(workspaces).where(eq(workspaces.id, bPersonal))).toEqual([]);
    expect(await db.select().from(experiments).where(eq(experiments.workspaceId, bPersonal))).toEqual([]);
    expect(await db.select().from(files).where(eq(files.workspaceId, bPersonal))).toEqual([]);
    const objects = await storedFiles(server.dataDir, bucket);
    expect(objects.filter((f) => f.includes(b.userId) || f.includes(personalExp.experimentUuid))).toEqual([]);
    expect(server.services.serving.cache.stats().ids).not.toContain(personalExp.id);
    // No row nor object names B's e-mail.
    expect(objects.filter((f) => f.includes(b.email))).toEqual([]);
    const { rows: tables } = (await db.execute(
      sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    )) as unknown as { rows: Array<{ table_name: string }> };
    const naming: string[] = [];
    for (const { table_name } of tables) {
      const { rows } = (await db.execute(
        sql`select count(*)::int as n from ${sql.identifier(table_name)} t where t::text ilike ${`%${b.email}%`}`,
      )) as unknown as { rows: Array<{ n: number }> };
      if (rows[0].n > 0) naming.push(table_name);
    }
    expect(naming).toEqual([]);
    // A still owns the workspace; B is no longer a member.
    expect((await new WorkspaceMemberRepository(db).list(shared)).map((m) => m.userId)).toEqual([a.userId]);
  });
});

/** A fixture model published in a shared workspace, under the workspace's own prefix, as the publish job does. */
async function publishIn(server: TestServer, builderId: string, workspaceId: string, experimentId = 1) {
  const { db, bucket } = server.services;
  const modelDir = servingFixtures().modelDir("tabular_binary");
  const storePath = `models/${workspaceId}/${experimentId}/v1`;
  for (const f of ["model.onnx", "manifest.json"]) await bucket.uploadFile(path.join(modelDir, f), `${storePath}/${f}`);
  const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, "manifest.json"), "utf8"));
  const [exp] = await db
    .insert(experiments)
    .values({
      userId: builderId,
      workspaceId,
      experimentId,
      request: { ...fixtureRequest(builderId, experimentId, manifest), zip_gcloud: `${workspaceId}/study/data.zip` },
      requestHash: `shared-${experimentId}`,
      status: "ready",
    })
    .returning();
  await db
    .insert(models)
    .values({ userId: builderId, workspaceId, experimentUuid: exp.id, experimentId, version: 1, kind: manifest.kind, storePath, manifest });
  return exp;
}

describe.skipIf(!haveFixturePython)("deleting a shared workspace (DELETE /v1/workspaces/{id})", () => {
  let server: TestServer;
  let a: UserWithKey;
  let b: UserWithKey;
  let team: string;

  const session = (u: UserWithKey) => signIn(server, u);
  const del = async (headers: Record<string, string>, id: string) => {
    const res = await fetch(`${server.url}/v1/workspaces/${id}`, { method: "DELETE", headers });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    a = await createUserWithKey(server);
    b = await createUserWithKey(server);
    [{ id: team }] = await server.services.db.insert(workspaces).values({ name: "Oncology" }).returning({ id: workspaces.id });
    const members = new WorkspaceMemberRepository(server.services.db);
    await members.add(team, a.userId, "owner");
    await members.add(team, b.userId, "editor");
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("only an owner deletes it, never a personal one; its keys, rows and objects go, A's personal work stays", async () => {
    const { db, bucket, auth, datasets } = server.services;
    const exp = await publishIn(server, b.userId, team);
    const bTeam = { userId: b.userId, workspace: (await new WorkspaceRepository(db).resolve(b.userId, team))! };
    await datasets.upload(bTeam, `${team}/study/data.zip`, Readable.from(tabularZip().zip));
    await publishFixture(server, a.userId, 1, servingFixtures().modelDir("tabular_binary"));
    const teamKey = (await auth.apiKeys.create(a.userId, { scopes: ALL_KEY_SCOPES, workspaceId: team })).key;
    const predict = (key: string) =>
      fetch(`${server.url}/v1/experiments/1/predict`, {
        method: "POST",
        headers: bearer(key, { "content-type": "application/json" }),
        body: JSON.stringify({ message: servingFixtures().expected["tabular_binary/row0"].row }),
      });
    expect((await predict(teamKey)).status).toBe(201);
    const aSession = await session(a);
    const bSession = await session(b);

    const editor = await del(bSession, team);
    expect(editor.status).toBe(403);
    expect(editor.body.error.code).toBe("missing_permission_workspace_delete");
    const personal = await del(aSession, await personalWorkspaceId(db, a.userId));
    expect(personal.status).toBe(409);
    expect(personal.body.error.code).toBe("personal_workspace");

    const done = await del(aSession, team);
    expect(done).toMatchObject({ status: 202, body: { workspace_id: team, status: "deleting", experiments: 1 } });
    // At once: the workspace's key is refused and no member reaches it.
    expect((await predict(teamKey)).status).toBe(401);
    const read = await fetch(`${server.url}/v1/experiments`, { headers: { ...bSession, "x-builder-workspace": team } });
    expect(read.status).toBe(404);
    await waitFor(
      "the deletion to finish",
      async () => (await db.select().from(workspaces).where(eq(workspaces.id, team))).length === 0,
      30_000,
      200,
    );
    expect(await db.select().from(experiments).where(eq(experiments.id, exp.id))).toEqual([]);
    expect(await db.select().from(files).where(eq(files.workspaceId, team))).toEqual([]);
    expect((await storedFiles(server.dataDir, bucket)).filter((f) => f.includes(team) || f.includes(exp.id))).toEqual([]);
    // A's personal model still answers A's own key; A and B keep their accounts.
    expect((await predict(a.key)).status).toBe(201);
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(b.key) })).status).toBe(200);
  });

  it("a deletion cut short after its first step (a kill) is finished by the sweep", async () => {
    const { db, bucket } = server.services;
    const [{ id: cut }] = await db.insert(workspaces).values({ name: "Cut short" }).returning({ id: workspaces.id });
    await new WorkspaceMemberRepository(db).add(cut, a.userId, "owner");
    const exp = await publishIn(server, a.userId, cut, 7);
    // Step 1 alone, as a process killed right after it leaves it: marked, members gone, the rest still there.
    expect(await new WorkspaceRepository(db).markErasing(cut)).toBe(true);
    expect(await bucket.stat(`models/${cut}/7/v1/model.onnx`)).toBeTruthy();
    await server.services.workspaceErasure.sweep();
    expect(await db.select().from(workspaces).where(eq(workspaces.id, cut))).toEqual([]);
    expect(await db.select().from(experiments).where(eq(experiments.id, exp.id))).toEqual([]);
    expect((await storedFiles(server.dataDir, bucket)).filter((f) => f.includes(cut))).toEqual([]);
  });
});
