import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { KeyScope } from "../../src/auth/key-scopes.js";
import { sha256Hex } from "../../src/auth/secrets.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";

// Issue 50 item 3: a key does what its scopes say, on Express and on the /predict lane alike; a key made before
// scopes (NULL) keeps doing everything; an expired key is refused with its own code; last_used_at shows.

const MODEL = 3;
const OTHER_MODEL = 4;
const ROW = [63, 1, 27.5, 2];

describeEachTarget("API-key scopes on %s", (target) => {
  const run = haveFixturePython ? it : it.skip;
  let server: TestServer;
  let owner: UserWithKey;
  let dashboard: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer(target, { RATE_LIMIT_PER_MINUTE: "1000" });
    owner = await createUserWithKey(server);
    if (haveFixturePython) {
      const fx = servingFixtures();
      await publishFixture(server, owner.userId, MODEL, fx.modelDir("tabular_binary"));
      await publishFixture(server, owner.userId, OTHER_MODEL, fx.modelDir("tabular_binary"));
    }
    const signin = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: owner.email, password: owner.password }),
    });
    expect(signin.status).toBe(200);
    const cookie = signin.headers.get("set-cookie")!.split(";")[0];
    dashboard = {
      cookie,
      "x-csrf-token": ((await signin.json()) as { csrf_token: string }).csrf_token,
      "content-type": "application/json",
    };
  });
  afterAll(async () => {
    await server?.teardown();
  });

  /** A key of the owner's made through the dashboard's own route, as a user makes it. */
  async function makeKey(body: Record<string, unknown>): Promise<{ key: string; id: string; status: number; json: any }> {
    const res = await fetch(`${server.url}/v1/api-keys`, {
      method: "POST",
      headers: dashboard,
      body: JSON.stringify({ name: "k", ...body }),
    });
    const json = (await res.json()) as any;
    return { key: json.key, id: json.id, status: res.status, json };
  }
  const predict = (key: string, id = MODEL, lane = true) =>
    // The canonical path with no query goes down the /predict lane; with a query it goes through Express.
    fetch(`${server.url}/v1/experiments/${id}/predict${lane ? "" : "?send_back=false"}`, {
      method: "POST",
      headers: bearer(key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: ROW }),
    });
  const seedPredict = (key: string, id: number) =>
    fetch(`${server.url}/predict`, {
      method: "POST",
      headers: bearer(key, { "content-type": "application/json" }),
      body: JSON.stringify({ message: ROW, experiment_id: id }),
    });
  const get = (key: string, path: string, lang = "en") =>
    fetch(`${server.url}${path}`, { headers: bearer(key, { "accept-language": lang }) });
  const postExperiment = (key: string) =>
    fetch(`${server.url}/v1/experiments`, { method: "POST", headers: bearer(key, { "content-type": "application/json" }), body: "{}" });
  const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

  it("a new key without scopes named may only predict; the listing says so", async () => {
    const made = await makeKey({});
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ scopes: ["predict"], legacy_full_access: false, model_ids: null, expires_at: null, expired: false });
  });

  run("a predict-only key answers /predict (lane and Express) and gets 403 api_key_scope_missing on GET /v1/experiments", async () => {
    const { key } = await makeKey({ scopes: ["predict"] });
    expect((await predict(key)).status).toBe(201);
    expect((await predict(key, MODEL, false)).status).toBe(201);
    expect((await seedPredict(key, MODEL)).status).toBe(201);
    const list = await get(key, "/v1/experiments");
    expect(list.status).toBe(403);
    const error = await errorOf(list);
    expect(error.code).toBe("api_key_scope_missing");
    expect(error.message).toContain("scope read");
    const spanish = await errorOf(await get(key, "/v1/experiments", "es"));
    expect(spanish.message).toContain("no tiene el permiso read");
  });

  run("a read key gets the GETs but 403 on POST /v1/experiments, and cannot predict", async () => {
    const { key } = await makeKey({ scopes: ["read"] });
    expect((await get(key, "/v1/experiments")).status).toBe(200);
    expect((await get(key, `/v1/models/${MODEL}`)).status).toBe(200);
    const post = await postExperiment(key);
    expect(post.status).toBe(403);
    expect(await errorOf(post)).toMatchObject({ code: "api_key_scope_missing", message: expect.stringContaining("scope build") });
    const refused = await predict(key);
    expect(refused.status).toBe(403);
    // The /predict routes keep the seed's failed-prediction body: error 1 beside the code.
    expect(await refused.json()).toMatchObject({ error: 1, code: "api_key_scope_missing" });
  });

  it("a build key reads too (it polls what it built), and gets as far as validation on POST /v1/experiments", async () => {
    const { key } = await makeKey({ scopes: ["build"] });
    expect((await get(key, "/v1/experiments")).status).toBe(200);
    expect((await postExperiment(key)).status).toBe(400); // past the scope: the empty body is what is wrong
    expect((await fetch(`${server.url}/v1/admin/users`, { headers: bearer(key) })).status).toBe(403);
  });

  run("a key limited to a model predicts with it and gets 403 api_key_model_not_allowed on another, both ways in", async () => {
    const made = await makeKey({ scopes: ["predict"], model_ids: [MODEL] });
    expect(made.json.model_ids).toEqual([MODEL]);
    expect((await predict(made.key, MODEL)).status).toBe(201);
    for (const res of [
      await predict(made.key, OTHER_MODEL),
      await predict(made.key, OTHER_MODEL, false),
      await seedPredict(made.key, OTHER_MODEL),
    ]) {
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({
        error: 1,
        code: "api_key_model_not_allowed",
        message: expect.stringContaining(`model ${OTHER_MODEL}`),
      });
    }
  });

  it("an expired key is refused with 401 api_key_expired and its own message; an expiry in the past is refused at creation", async () => {
    const past = await makeKey({ expires_at: new Date(Date.now() - 60_000).toISOString() });
    expect(past.status).toBe(400);
    const made = await makeKey({ scopes: ["read"], expires_at: new Date(Date.now() + 1500).toISOString() });
    expect(made.status).toBe(201);
    expect((await get(made.key, "/v1/me")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1600));
    const res = await get(made.key, "/v1/me");
    expect(res.status).toBe(401);
    expect(await errorOf(res)).toEqual({
      code: "api_key_expired",
      message: "this API key has expired; make a new one at /settings/api",
      type: "authentication_error",
    });
    expect((await errorOf(await get(made.key, "/v1/me", "es"))).message).toBe(
      "esta clave de API ha caducado; cree una nueva en /settings/api",
    );
    const listed = ((await (await fetch(`${server.url}/v1/api-keys`, { headers: dashboard })).json()) as any).data;
    expect(listed.find((k: { id: string }) => k.id === made.id)).toMatchObject({ expired: true, expires_at: expect.any(String) });
  });

  run("a key made before scopes (scopes NULL) still does everything, and the listing marks it legacy", async () => {
    const legacy = await createUserWithKey(server);
    await server.services.db.execute(sql`update api_keys set scopes = null where id = ${legacy.keyId}`);
    await publishFixture(server, legacy.userId, MODEL, servingFixtures().modelDir("tabular_binary"));
    expect((await predict(legacy.key)).status).toBe(201);
    expect((await get(legacy.key, "/v1/experiments")).status).toBe(200);
    expect((await postExperiment(legacy.key)).status).toBe(400); // past every scope check: validation
    expect((await get(legacy.key, "/v1/admin/users")).status).toBe(403); // admin_only: the owner is no administrator
    expect(await errorOf(await get(legacy.key, "/v1/admin/users"))).toMatchObject({ code: "admin_only" });
    const rows = await server.services.auth.apiKeys.list(legacy.userId);
    expect(rows[0]).toMatchObject({ scopes: null });
  });

  it("the listing shows scopes, who made the key, when, and when it was last used", async () => {
    const scopes: KeyScope[] = ["predict", "read"];
    const made = await makeKey({ name: "scanner", scopes: ["read", "predict", "read"] });
    expect(made.json.scopes).toEqual(scopes); // each once, in a fixed order
    const before = ((await (await fetch(`${server.url}/v1/api-keys`, { headers: dashboard })).json()) as any).data;
    expect(before.find((k: { id: string }) => k.id === made.id)).toMatchObject({
      name: "scanner",
      created_by: owner.email,
      created_at: expect.any(String),
      last_used_at: null,
      legacy_full_access: false,
    });
    expect((await get(made.key, "/v1/me")).status).toBe(200);
    await server.services.auth.apiKeys.flush();
    const after = ((await (await fetch(`${server.url}/v1/api-keys`, { headers: dashboard })).json()) as any).data;
    const row = after.find((k: { id: string }) => k.id === made.id);
    expect(Date.parse(row.last_used_at)).toBeGreaterThan(Date.parse(row.created_at) - 1000);
  });

  it("narrowing a cached key with SQL takes effect at once: the change trigger announces scopes too", async () => {
    const made = await makeKey({ scopes: ["read"] });
    expect((await get(made.key, "/v1/experiments")).status).toBe(200);
    expect(server.services.auth.apiKeys.cache.get(sha256Hex(made.key))?.id).toBe(made.id); // served from the cache now
    await server.services.db.execute(sql`update api_keys set scopes = '{predict}' where id = ${made.id}`);
    const t0 = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - t0 < 5_000) {
      status = (await get(made.key, "/v1/experiments")).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 5));
    }
    expect(status).toBe(403);
    expect(Date.now() - t0).toBeLessThan(5_000); // the cache's TTL is 60 s: only the notification explains this
  });

  it("refuses a key request that makes no sense: no scope, an unknown one, models without predict", async () => {
    expect((await makeKey({ scopes: [] })).status).toBe(400);
    expect((await makeKey({ scopes: ["everything"] })).status).toBe(400);
    const noPredict = await makeKey({ scopes: ["read"], model_ids: [MODEL] });
    expect(noPredict.status).toBe(400);
    expect(noPredict.json.error.details[0].field).toBe("model_ids");
  });
});
