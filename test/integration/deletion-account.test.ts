import { execFile } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { plantObject, storedFiles, TEST_STORAGE } from "../helpers/storage.js";
import { plant, rowsOfUser } from "./deletion-fixtures.js";
import { api, tabularZip, waitFor } from "./experiments-fixtures.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// Account erasure leaves nothing of the user in the database (every table with a user_id column, found in the
// catalogue) nor in the data folder (bucket, logs, work, model cache), and leaves another user exactly as it was.
// Through the API (DELETE /v1/me, password re-entered) and through the CLI (`./builder users erase`). In the storage
// suite: with the bucket in the data folder, and in S3 (test/helpers/storage.ts).

const BUILDER = path.resolve(import.meta.dirname, "../../builder");
vi.setConfig({ testTimeout: 120_000 });

describe.skipIf(!process.env.TEST_DATABASE_URL || !haveFixturePython)(`account erasure (${TEST_STORAGE})`, () => {
  const fx = haveFixturePython ? servingFixtures() : (undefined as never);
  let server: TestServer;
  let bob: UserWithKey;
  let url: string;

  /** A user with all a user can have: experiments with models and reports, uploads, a chat, a session, keys, logs. */
  const populate = async (n: number) => {
    const u = await createUserWithKey(server);
    const second = await server.services.auth.apiKeys.create(u.userId, { scopes: ALL_KEY_SCOPES, name: "second" });
    const exp = await publishFixture(server, u.userId, 1, fx.modelDir("tabular_binary"));
    await publishFixture(server, u.userId, 2, fx.modelDir("tabular_binary"));
    await server.services.experiments.repo.addEvent(exp.experimentUuid, "status", { status: "ready", zip: `${u.userId}/study/data.zip` });
    await server.services.datasets.upload(u.scope, `${u.userId}/study/data.zip`, Readable.from(tabularZip().zip));
    await plantObject(server.services.bucket, `models/${u.userId}/1/v1/figures/roc.svg`, "<svg/>");
    await plantObject(server.services.bucket, `logs/${u.userId}/1/${exp.experimentUuid}.log`, "log");
    plant(server.dataDir, `logs/${exp.experimentUuid}.log`, "log");
    plant(server.dataDir, `work/${exp.experimentUuid}/dataset/table.csv`, "a,b");
    const chat = await fetch(`${server.url}/v1/chat`, {
      method: "POST",
      headers: bearer(u.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: `how is model ${n} doing?` }),
    });
    expect(chat.status).toBe(201);
    // A PACS connection with its sealed password (Settings → PACS): gone with the account too.
    const pacs = await fetch(`${server.url}/v1/pacs`, {
      method: "PUT",
      headers: bearer(u.key, { "content-type": "application/json" }),
      body: JSON.stringify({ dicomweb_url: "https://pacs.hospital.example/dicom-web", username: "builder", password: `pacs-${n}` }),
    });
    expect(pacs.status).toBe(200);
    const predicted = await fetch(`${server.url}/v1/experiments/1/predict`, {
      method: "POST",
      headers: bearer(u.key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: fx.expected["tabular_binary/row0"].row }),
    });
    expect(predicted.status).toBe(201); // loaded in the model cache
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: u.email, password: u.password }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const { csrf_token } = (await signIn.json()) as { csrf_token: string };
    return { ...u, second: second.key, cookie, csrf: csrf_token, exp };
  };
  const ofUser = (userId: string) => (f: string) => f.includes(userId);
  /** The data folder's files and the bucket's objects (as bucket/<path>), wherever the bucket is. */
  const stored = () => storedFiles(server.dataDir, server.services.bucket);

  beforeAll(async () => {
    server = await startTestServer("postgres", { API_KEY_CACHE_TTL_S: "60" });
    url = server.services.config.DATABASE_URL!;
    bob = await populate(0);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("DELETE /v1/me with the password: nothing of the user is left in the database or the data folder; bob is untouched", async () => {
    const alice = await populate(1);
    const bobRows = await rowsOfUser(url, bob.userId);
    const bobFiles = (await stored()).filter(ofUser(bob.userId));
    const aliceRows = await rowsOfUser(url, alice.userId);
    expect(aliceRows).toMatchObject({
      users: 1,
      experiments: 2,
      models: 2,
      api_keys: 2,
      sessions: 1,
      files: 1,
      chat_conversations: 1,
      pacs_connections: 1,
    });
    expect(aliceRows.chat_messages).toBeGreaterThan(0);
    const aliceFiles = (await stored()).filter(
      (f) => f.includes(alice.userId) || f.includes(alice.exp.experimentUuid) || f.includes(alice.exp.id),
    );
    expect(aliceFiles.length).toBeGreaterThanOrEqual(8);

    const dash = { cookie: alice.cookie, "x-csrf-token": alice.csrf, "content-type": "application/json" };
    const wrong = await fetch(`${server.url}/v1/me`, {
      method: "DELETE",
      headers: dash,
      body: JSON.stringify({ password: "not my password" }),
    });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as any).error.message).toContain("nothing was erased");
    expect(await rowsOfUser(url, alice.userId)).toEqual(aliceRows);
    const noCsrf = await fetch(`${server.url}/v1/me`, {
      method: "DELETE",
      headers: { cookie: alice.cookie, "content-type": "application/json" },
      body: JSON.stringify({ password: alice.password }),
    });
    expect(noCsrf.status).toBe(403);

    const res = await fetch(`${server.url}/v1/me`, { method: "DELETE", headers: dash, body: JSON.stringify({ password: alice.password }) });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ user_id: alice.userId, status: "erasing", experiments: 2 });
    expect(res.headers.get("set-cookie")).toMatch(/builder_session=;/);
    // At once: both keys and the session are refused, the model does not serve, signing in again fails.
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(alice.key) })).status).toBe(401);
    expect((await fetch(`${server.url}/v1/me`, { headers: bearer(alice.second) })).status).toBe(401);
    expect((await fetch(`${server.url}/v1/me`, { headers: { cookie: alice.cookie } })).status).toBe(401);
    const again = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: alice.email, password: alice.password }),
    });
    expect(again.status).toBe(401);

    await waitFor("the erasure to finish", async () => (await rowsOfUser(url, alice.userId)).users === 0, 30_000, 200);
    const left = await rowsOfUser(url, alice.userId);
    expect(
      Object.values(left).every((n) => n === 0),
      JSON.stringify(left),
    ).toBe(true);
    expect(
      (await stored()).filter((f) => f.includes(alice.userId) || f.includes(alice.exp.experimentUuid) || f.includes(alice.exp.id)),
    ).toEqual([]);
    expect(server.services.serving.cache.stats().ids).not.toContain(alice.exp.id);
    // Only the audit log keeps the (now unresolvable) id, by design: what happened, without email, names or paths.
    const { rows: audit } = (await server.services.database.db.execute(
      sql`select action, target, details::text as details from audit_events where actor_id = ${alice.userId}`,
    )) as unknown as { rows: object[] };
    expect(audit.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit)).not.toContain(alice.email);
    expect(JSON.stringify(audit)).not.toContain("study");

    expect(await rowsOfUser(url, bob.userId)).toEqual(bobRows);
    expect((await stored()).filter(ofUser(bob.userId))).toEqual(bobFiles);
    expect(
      (await api(server.url, bob.key).post("/v1/experiments/1/predict", { message: fx.expected["tabular_binary/row0"].row })).status,
    ).toBe(201);
  });

  it("./builder users erase --email: the same, from the command line, on the server's Postgres and data folder", async () => {
    const carol = await populate(2);
    const bobRows = await rowsOfUser(url, bob.userId);
    const run = promisify(execFile);
    const env = {
      PATH: process.env.PATH!,
      HOME: os.tmpdir(),
      LOG_LEVEL: "silent",
      DATABASE_URL: url,
      BUILDER_DATA_DIR: server.dataDir,
      ...server.storageEnv,
    };
    const missing = await run(BUILDER, ["users", "erase", "--email", "nobody@test.example"], { env }).catch(
      (e) => e as { code: number; stderr: string },
    );
    expect((missing as { code: number }).code).toBe(2);
    expect((missing as { stderr: string }).stderr).toContain("no user with email nobody@test.example");
    const { stdout } = await run(BUILDER, ["users", "erase", "--email", carol.email], { env, timeout: 120_000 });
    expect(stdout).toContain(`erased ${carol.email}`);
    const left = await rowsOfUser(url, carol.userId);
    expect(
      Object.values(left).every((n) => n === 0),
      JSON.stringify(left),
    ).toBe(true);
    // The server's local copy of the model is unloaded by the notification; the files in the shared folder are gone.
    await waitFor(
      "the server to unload carol's model",
      async () => !server.services.serving.cache.stats().ids.includes(carol.exp.id),
      5_000,
      20,
    );
    expect(
      (await stored()).filter((f) => f.includes(carol.userId) || f.includes(carol.exp.experimentUuid) || f.includes(carol.exp.id)),
    ).toEqual([]);
    expect(await rowsOfUser(url, bob.userId)).toEqual(bobRows);
  });
});
