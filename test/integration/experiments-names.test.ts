import { afterAll, beforeAll, expect, it } from "vitest";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { api, dataRequest, waitForStatus, type Api } from "./experiments-fixtures.js";

// Names and descriptions of experiments (issue 38, item 1): set on POST, edited with PATCH, shown in the detail,
// the list and the models, and searched with ?q=. The zips were never uploaded: the jobs fail fast, which is fine
// here (only the labels and the search are under test).

const ids = (body: { data: Array<{ experiment_id: number }> }) => body.data.map((e) => e.experiment_id).sort((a, b) => a - b);
const fieldsOf = (body: any) => (body.error?.details ?? []).map((d: { field: string }) => d.field);

describeEachTarget("experiment names on %s", (target) => {
  let server: TestServer;
  let alice: { userId: string; email: string; password: string; client: Api };
  let bob: { userId: string; client: Api };
  beforeAll(async () => {
    server = await startTestServer(target, { JOB_LEASE_S: "2" });
    const a = await createUserWithKey(server);
    const b = await createUserWithKey(server);
    alice = { ...a, client: api(server.url, a.key) };
    bob = { ...b, client: api(server.url, b.key) };
    const posts = [
      dataRequest(a.userId, 1, `${a.userId}/wdbc/wdbc_data.zip`, ["f1"], {
        name: "  Breast cancer (WDBC)  ",
        description: "Fine-needle aspirates, 569 patients",
      }),
      dataRequest(a.userId, 2, `${a.userId}/archive2024/pima.zip`, ["f1"], { name: "Diabetes 100% sure", label_cols: ["outcome"] }),
      dataRequest(a.userId, 3, `${a.userId}/us/nodules.zip`, ["f1"], { description: "Thyroid ULTRASOUND nodules", label_cols: ["tirads"] }),
    ];
    for (const body of posts) expect((await alice.client.post("/v1/experiments", body)).status).toBe(202);
    // Bob's experiment matches the searches below by name: it must never show in Alice's results.
    expect(
      (
        await bob.client.post(
          "/v1/experiments",
          dataRequest(b.userId, 1, `${b.userId}/x/breast.zip`, ["f1"], { name: "Breast cancer too" }),
        )
      ).status,
    ).toBe(202);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("POST stores a trimmed name and the description in their own fields, not in the request", async () => {
    const got = await alice.client.get("/v1/experiments/1");
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ name: "Breast cancer (WDBC)", description: "Fine-needle aspirates, 569 patients" });
    expect(got.body.request).not.toHaveProperty("name");
    expect(got.body.request).not.toHaveProperty("description");
    expect((await alice.client.get("/v1/experiments/2")).body).toMatchObject({ name: "Diabetes 100% sure", description: null });
  });

  it("POST refuses a long name, a name with control characters and a long description, naming the field", async () => {
    const base = dataRequest(alice.userId, 40, `${alice.userId}/x/d.zip`, ["f1"]);
    const long = await alice.client.post("/v1/experiments", { ...base, name: "x".repeat(121) });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("invalid_request");
    expect(fieldsOf(long.body)).toEqual(["name"]);
    expect(long.body.error.details[0].message).toMatch(/at most 120 characters/);
    const control = await alice.client.post("/v1/experiments", { ...base, name: "two\nlines" });
    expect(control.status).toBe(400);
    expect(fieldsOf(control.body)).toEqual(["name"]);
    expect(control.body.error.details[0].message).toMatch(/control characters/);
    const longDescription = await alice.client.post("/v1/experiments", { ...base, description: "y".repeat(2001) });
    expect(longDescription.status).toBe(400);
    expect(fieldsOf(longDescription.body)).toEqual(["description"]);
    expect((await alice.client.get("/v1/experiments/40")).status).toBe(404);
    // The limit is in characters: 120 accented letters are fine.
    const accented = await alice.client.post("/v1/experiments", { ...base, name: "é".repeat(120), description: "line one\nline two\ttab" });
    expect(accented.status).toBe(202);
    expect(accented.body).toMatchObject({ name: "é".repeat(120), description: "line one\nline two\ttab" });
  });

  it("a retried POST stays idempotent, with or without the labels, and never overwrites them", async () => {
    const body = dataRequest(alice.userId, 41, `${alice.userId}/x/retry.zip`, ["f1"], { name: "Retry me", description: "first" });
    expect((await alice.client.post("/v1/experiments", body)).status).toBe(202);
    const same = await alice.client.post("/v1/experiments", body);
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ experiment_id: 41, name: "Retry me", description: "first" });
    const relabelled = await alice.client.post("/v1/experiments", { ...body, name: "Another label" });
    expect(relabelled.status).toBe(200);
    expect(relabelled.body.name).toBe("Retry me");
    // A different training request under the same number is still a conflict.
    expect((await alice.client.post("/v1/experiments", { ...body, optimization_type: 0 })).status).toBe(409);
  });

  it("PATCH sets, keeps and clears (null) the labels for the owner", async () => {
    const set = await alice.client.patch("/v1/experiments/3", { name: " Thyroid nodules " });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ experiment_id: 3, name: "Thyroid nodules", description: "Thyroid ULTRASOUND nodules" });
    expect((await alice.client.get("/v1/experiments/3")).body.name).toBe("Thyroid nodules");
    const listed = (await alice.client.get("/v1/experiments")).body.data.find((e: { experiment_id: number }) => e.experiment_id === 3);
    expect(listed).toMatchObject({ name: "Thyroid nodules", description: "Thyroid ULTRASOUND nodules" });
    const cleared = await alice.client.patch("/v1/experiments/3", { description: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ name: "Thyroid nodules", description: null });
    const both = await alice.client.patch("/v1/experiments/3", { name: null, description: "Thyroid ULTRASOUND nodules" });
    expect(both.body).toMatchObject({ name: null, description: "Thyroid ULTRASOUND nodules" });
    // The retry of the original POST is still the same experiment after an edit.
    const retry = await alice.client.post(
      "/v1/experiments",
      dataRequest(alice.userId, 3, `${alice.userId}/us/nodules.zip`, ["f1"], {
        description: "Thyroid ULTRASOUND nodules",
        label_cols: ["tirads"],
      }),
    );
    expect(retry.status).toBe(200);
  });

  it("PATCH of another user's experiment is 404, as if it did not exist", async () => {
    const theirs = await bob.client.patch("/v1/experiments/2", { name: "mine now" });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe("not_found");
    const missing = await bob.client.patch("/v1/experiments/999", { name: "mine now" });
    expect(missing.status).toBe(404);
    expect(theirs.body.error.message).toBe(missing.body.error.message.replace("999", "2"));
    expect((await alice.client.get("/v1/experiments/2")).body.name).toBe("Diabetes 100% sure");
  });

  it("PATCH refuses bad labels with a 400 naming the field", async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ name: "n".repeat(121) }, "name", /at most 120/],
      [{ name: "bell\u0007" }, "name", /control characters/],
      [{ name: "tab\there" }, "name", /control characters/],
      [{ description: "d".repeat(2001) }, "description", /at most 2000/],
      [{ description: "escape\u001b[31m" }, "description", /control characters/],
      [{ name: 5 }, "name", /text/],
    ];
    for (const [body, field, message] of cases) {
      const res = await alice.client.patch("/v1/experiments/2", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(fieldsOf(res.body)).toEqual([field]);
      expect(res.body.error.details[0].message).toMatch(message);
    }
    expect((await alice.client.patch("/v1/experiments/2", {})).status).toBe(400);
    expect(fieldsOf((await alice.client.patch("/v1/experiments/2", { name: "x", status: "ready" })).body)).toContain("");
    expect((await alice.client.get("/v1/experiments/2")).body.name).toBe("Diabetes 100% sure");
  });

  it("PATCH from the dashboard's session needs its CSRF token", async () => {
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": "10.9.9.9" },
      body: JSON.stringify({ email: alice.email, password: alice.password }),
    });
    expect(signIn.status).toBe(200);
    const { csrf_token } = (await signIn.json()) as { csrf_token: string };
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
    const patch = (headers: Record<string, string>) =>
      fetch(`${server.url}/v1/experiments/1`, {
        method: "PATCH",
        headers: { "content-type": "application/json", cookie, ...headers },
        body: JSON.stringify({ description: "from the dashboard" }),
      });
    const without = await patch({});
    expect(without.status).toBe(403);
    expect(((await without.json()) as any).error.code).toBe("invalid_csrf_token");
    const withToken = await patch({ "x-csrf-token": csrf_token });
    expect(withToken.status).toBe(200);
    expect(((await withToken.json()) as any).description).toBe("from the dashboard");
    expect((await alice.client.patch("/v1/experiments/1", { description: "Fine-needle aspirates, 569 patients" })).status).toBe(200);
  });

  it("?q= finds by name, description, dataset file name and label column, any case, only the caller's", async () => {
    const search = async (q: string, client = alice.client) => {
      const res = await client.get(`/v1/experiments?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
      return ids(res.body);
    };
    expect(await search("breast")).toEqual([1]);
    expect(await search("ultrasound")).toEqual([3]);
    expect(await search("PIMA")).toEqual([2]);
    expect(await search("wdbc_data.zip")).toEqual([1]);
    // Only the file's own name is searched, not the folders above it (the user's id would match everything).
    expect(await search("archive2024")).toEqual([]);
    expect(await search(alice.userId)).toEqual([]);
    expect(await search("TIRADS")).toEqual([3]);
    expect(await search("outcome")).toEqual([2]);
    expect(await search("no such thing")).toEqual([]);
    expect(await search("breast", bob.client)).toEqual([1]);
    expect((await alice.client.get("/v1/experiments?q=breast")).body.data[0].name).toBe("Breast cancer (WDBC)");
    const page = (await alice.client.get("/v1/experiments?q=breast")).body;
    expect(page.total).toBe(1);
  });

  it("?q= takes % and _ literally", async () => {
    const search = async (q: string) => ids((await alice.client.get(`/v1/experiments?q=${encodeURIComponent(q)}`)).body);
    expect(await search("%")).toEqual([2]);
    expect(await search("100%")).toEqual([2]);
    expect(await search("_")).toEqual([1]);
    expect(await search("c_d")).toEqual([1]);
    expect(await search("s_re")).toEqual([]);
    expect(await search("\\")).toEqual([]);
  });

  it("?q= combines with status, and more than 200 characters is a 400", async () => {
    const done = await waitForStatus(alice.client, 1, ["failed", "invalid_dataset", "ready", "cancelled"], 60_000);
    const status = done.status as string;
    expect(ids((await alice.client.get(`/v1/experiments?q=breast&status=${status}`)).body)).toEqual([1]);
    const other = status === "ready" ? "cancelled" : "ready";
    expect(ids((await alice.client.get(`/v1/experiments?q=breast&status=${other}`)).body)).toEqual([]);
    const tooLong = await alice.client.get(`/v1/experiments?q=${"a".repeat(201)}`);
    expect(tooLong.status).toBe(400);
    expect(fieldsOf(tooLong.body)).toEqual(["q"]);
    expect((await alice.client.get(`/v1/experiments?q=${"a".repeat(200)}`)).status).toBe(200);
  });

  it("?q= with a NUL character is a 400 naming q, not a 500 from the database", async () => {
    const res = await alice.client.get("/v1/experiments?q=bre%00ast");
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual(["q"]);
    expect(JSON.stringify(res.body)).toContain("NUL");
  });

  it.skipIf(!haveFixturePython)("GET /v1/models and /v1/models/{id} carry the experiment's name and description", async () => {
    await publishFixture(server, alice.userId, 50, servingFixtures().modelDir("tabular_binary"));
    expect((await alice.client.patch("/v1/experiments/50", { name: "Published one", description: "served" })).status).toBe(200);
    const list = await alice.client.get("/v1/models");
    expect(list.body.data.find((m: { experiment_id: number }) => m.experiment_id === 50)).toMatchObject({
      name: "Published one",
      description: "served",
    });
    expect((await alice.client.get("/v1/models/50")).body).toMatchObject({
      experiment_id: 50,
      name: "Published one",
      description: "served",
    });
  });
});
