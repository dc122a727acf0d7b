import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import express from "express";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardRouter } from "../../src/http/dashboard.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { makeZip, visionDataset } from "../helpers/zips.js";
import sharp from "sharp";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// The server side of the dashboard: first-run state, sign-up by config, change password, the report and figure
// routes (owner only), and the SPA served beside the API.

const json = (res: Response): Promise<any> => res.json();

async function signIn(server: TestServer, email: string, password: string) {
  const res = await fetch(`${server.url}/v1/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body = (await json(res)) as { csrf_token: string };
  return { status: res.status, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0], csrf: body.csrf_token };
}

describe("dashboard account routes", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("GET /v1/setup says whether any user exists, without sign-in; sign-up is off by default", async () => {
    const before = await json(await fetch(`${server.url}/v1/setup`));
    expect(before).toEqual({ users_exist: false, admin_exists: false, signup_enabled: false });
    await server.services.auth.users.create({ email: "first@hospital.example", password: "first user password" });
    expect(await json(await fetch(`${server.url}/v1/setup`))).toEqual({ users_exist: true, admin_exists: false, signup_enabled: false });
    const refused = await fetch(`${server.url}/v1/users`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "x@y.org", password: "long enough password" }),
    });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error.code).toBe("signup_disabled");
    expect(await server.services.auth.users.findByEmail("x@y.org")).toBeUndefined();
  });

  it("PUT /v1/account/password: checks the current password and the new one's strength, then signs out the other sessions only", async () => {
    const email = "nurse@hospital.example";
    await server.services.auth.users.create({ email, password: "old password 123" });
    const a = await signIn(server, email, "old password 123");
    const b = await signIn(server, email, "old password 123");
    const put = (s: typeof a, body: unknown, csrf = s.csrf) =>
      fetch(`${server.url}/v1/account/password`, {
        method: "PUT",
        headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": csrf },
        body: JSON.stringify(body),
      });

    expect((await put(a, { current_password: "old password 123", new_password: "new password 456" }, "wrong")).status).toBe(403);
    const wrong = await put(a, { current_password: "not it", new_password: "new password 456" });
    expect(wrong.status).toBe(400);
    expect((await json(wrong)).error.details).toEqual([{ field: "current_password", message: "not correct" }]);
    const weak = await put(a, { current_password: "old password 123", new_password: "short" });
    expect(weak.status).toBe(400);
    expect((await json(weak)).error.details[0].field).toBe("new_password");

    expect((await put(a, { current_password: "old password 123", new_password: "new password 456" })).status).toBe(204);
    expect((await fetch(`${server.url}/v1/me`, { headers: { cookie: a.cookie } })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/me`, { headers: { cookie: b.cookie } })).status).toBe(401);
    expect((await signIn(server, email, "old password 123")).status).toBe(401);
    expect((await signIn(server, email, "new password 456")).status).toBe(200);
  });

  // Issue 48 finding 13: a new password left the API keys working without a word; the owner now chooses, and the
  // audit log says which.
  it("PUT /v1/account/password keeps the API keys unless revoke_api_keys, and logs how many went or stayed", async () => {
    const email = "keys@hospital.example";
    const user = await server.services.auth.users.create({ email, password: "old password 123" });
    const { key } = await server.services.auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "pipeline" });
    const s = await signIn(server, email, "old password 123");
    const put = (body: unknown) =>
      fetch(`${server.url}/v1/account/password`, {
        method: "PUT",
        headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf },
        body: JSON.stringify(body),
      });
    const me = async () => (await fetch(`${server.url}/v1/me`, { headers: bearer(key) })).status;
    const lastChange = async () =>
      (await json(await fetch(`${server.url}/v1/audit?limit=100`, { headers: { cookie: s.cookie } }))).data.find(
        (e: { action: string }) => e.action === "password_changed",
      );

    expect((await put({ current_password: "old password 123", new_password: "new password 456" })).status).toBe(204);
    expect(await me()).toBe(200);
    expect(await lastChange()).toMatchObject({ details: { api_keys_kept: 1 } });

    expect((await put({ current_password: "new password 456", new_password: "newer password 789", revoke_api_keys: true })).status).toBe(
      204,
    );
    expect(await me()).toBe(403);
    expect(await lastChange()).toMatchObject({ details: { api_keys_revoked: 1 } });
  });
});

describe("sign-up when SIGNUP_ENABLED=true", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { SIGNUP_ENABLED: "true" });
  });
  afterAll(async () => {
    await server?.teardown();
  });

  const post = (body: unknown) =>
    fetch(`${server.url}/v1/users`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  // Issue 48 finding 12: a stranger signing up first held the only account, and the setup page then refused the
  // operator (a user existed): a server with no administrator.
  it("refuses sign-up until an administrator exists, saying so in both languages; the setup code still makes the administrator", async () => {
    const state = await json(await fetch(`${server.url}/v1/setup`));
    expect(state).toEqual({ users_exist: false, admin_exists: false, signup_enabled: true });
    const early = await post({ email: "stranger@elsewhere.example", password: "a stranger's long password" });
    expect(early.status).toBe(403);
    const body = await json(early);
    expect(body.error.code).toBe("signup_needs_admin");
    expect(body.error.message).toContain("setup code");
    const spanish = await fetch(`${server.url}/v1/users`, {
      method: "POST",
      headers: { "content-type": "application/json", "accept-language": "es" },
      body: JSON.stringify({ email: "stranger@elsewhere.example", password: "a stranger's long password" }),
    });
    expect((await json(spanish)).error.message).toContain("administrador");
    expect(await server.services.auth.users.findByEmail("stranger@elsewhere.example")).toBeUndefined();
    expect(await server.services.auth.account.anyUser()).toBe(false);

    const made = await fetch(`${server.url}/v1/setup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        setup_code: server.services.auth.firstRun.setupCode(),
        email: "admin@hospital.example",
        password: "the admin's long password",
      }),
    });
    expect(made.status).toBe(201);
    expect(await json(await fetch(`${server.url}/v1/setup`))).toMatchObject({ admin_exists: true, signup_enabled: true });
  });

  it("creates the account and answers 202 without a session; signing in next opens it", async () => {
    expect((await json(await fetch(`${server.url}/v1/setup`))).signup_enabled).toBe(true);
    const res = await post({ email: "New.Doctor@Hospital.example", password: "a long new password" });
    expect(res.status).toBe(202);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await json(res)).toEqual({ status: "accepted", message: expect.stringContaining("sign in") });
    const signedIn = await signIn(server, "new.doctor@hospital.example", "a long new password");
    expect(signedIn.status).toBe(200);
    expect((await json(await fetch(`${server.url}/v1/me`, { headers: { cookie: signedIn.cookie } }))).email).toBe(
      "new.doctor@hospital.example",
    );
  });

  it("a taken email gets the same answer as a free one (status, headers, body), and its account is untouched", async () => {
    await server.services.auth.users.create({ email: "taken@hospital.example", password: "the owner's long password" });
    const free = await post({ email: "free@hospital.example", password: "someone's long password" });
    const taken = await post({ email: "Taken@Hospital.example", password: "an intruder's long password" });
    const shape = async (r: Response) => ({
      status: r.status,
      body: await r.text(),
      headers: [...r.headers].filter(([name]) => !["x-request-id", "date", "etag", "content-length"].includes(name)).sort(),
    });
    expect(await shape(taken)).toEqual(await shape(free));
    // The intruder's password opens nothing; the owner's still works; no second account appeared.
    expect((await signIn(server, "taken@hospital.example", "an intruder's long password")).status).toBe(401);
    expect((await signIn(server, "taken@hospital.example", "the owner's long password")).status).toBe(200);
    expect((await server.services.auth.users.findByEmail("TAKEN@hospital.example"))?.email).toBe("taken@hospital.example");
  });

  // Issue 48 finding 15: the hourly sign-up allowance was per full IPv6 address.
  it("counts sign-ups per IPv6 /64", async () => {
    const from = (ip: string, i: number) =>
      fetch(`${server.url}/v1/users`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: JSON.stringify({ email: `v6-${i}@hospital.example`, password: "a long enough password" }),
      });
    for (let i = 1; i <= 10; i++) expect((await from(`2001:db8:4815::${i.toString(16)}`, i)).status).toBe(202);
    expect((await from("2001:db8:4815:0:ffff::1", 11)).status).toBe(429);
    expect((await from("2001:db8:4816::1", 12)).status).toBe(202);
  });

  it("a bad email or a weak password is still 400 (the same for every address)", async () => {
    const weak = await post({ email: "other@hospital.example", password: "short" });
    expect(weak.status).toBe(400);
    expect((await json(weak)).error.details[0].field).toBe("password");
    const takenWeak = await post({ email: "taken@hospital.example", password: "short" });
    expect(takenWeak.status).toBe(400);
    expect((await json(takenWeak)).error.details[0].field).toBe("password");
  });
});

describe.skipIf(!haveFixturePython)("report and figure routes", () => {
  let server: TestServer;
  let owner: UserWithKey;
  let other: UserWithKey;
  let modelDir: string;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    owner = await createUserWithKey(server);
    other = await createUserWithKey(server);
    // A fixture model plus what a pipeline writes beside it: report.json and one SVG figure named in the manifest.
    modelDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-report-"));
    const src = servingFixtures().modelDir("tabular_binary");
    fs.copyFileSync(path.join(src, "model.onnx"), path.join(modelDir, "model.onnx"));
    const manifest = JSON.parse(fs.readFileSync(path.join(src, "manifest.json"), "utf8"));
    manifest.report_file = "report.json";
    manifest.figures = [{ name: "roc", file: "figures/roc.svg", title: "ROC curve on the test set" }];
    fs.writeFileSync(path.join(modelDir, "manifest.json"), JSON.stringify(manifest));
    const row = await publishFixture(server, owner.userId, 5, modelDir);
    fs.writeFileSync(
      path.join(modelDir, "report.json"),
      JSON.stringify({
        roc: { fpr: [0, 1], tpr: [0, 1] },
        confusion_matrix: [
          [3, 1],
          [0, 4],
        ],
      }),
    );
    fs.writeFileSync(
      path.join(modelDir, "roc.svg"),
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
    );
    await server.services.bucket.uploadFile(path.join(modelDir, "report.json"), `${row.storePath}report.json`);
    await server.services.bucket.uploadFile(path.join(modelDir, "roc.svg"), `${row.storePath}figures/roc.svg`);
  });
  afterAll(async () => {
    await server?.teardown();
    fs.rmSync(modelDir, { recursive: true, force: true });
  });

  it("the owner reads report.json and the figure list; each figure is served as an inert image", async () => {
    const res = await fetch(`${server.url}/v1/experiments/5/report`, { headers: bearer(owner.key) });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toEqual({
      experiment_id: 5,
      model_version: 1,
      figures: [{ name: "roc", title: "ROC curve on the test set", url: "/v1/experiments/5/figures/roc" }],
      report: {
        roc: { fpr: [0, 1], tpr: [0, 1] },
        confusion_matrix: [
          [3, 1],
          [0, 4],
        ],
      },
    });
    const fig = await fetch(`${server.url}${body.figures[0].url}`, { headers: bearer(owner.key) });
    expect(fig.status).toBe(200);
    expect(fig.headers.get("content-type")).toBe("image/svg+xml");
    expect(fig.headers.get("content-security-policy")).toContain("sandbox");
    expect(await fig.text()).toContain("<svg");
  });

  it("another user's report and figures are 404, as is a figure the manifest does not name, and an experiment with no model", async () => {
    for (const p of ["/v1/experiments/5/report", "/v1/experiments/5/figures/roc"]) {
      const res = await fetch(`${server.url}${p}`, { headers: bearer(other.key) });
      expect(res.status, p).toBe(404);
      expect((await json(res)).error.code).toBe("not_found");
    }
    expect((await fetch(`${server.url}/v1/experiments/5/figures/pr`, { headers: bearer(owner.key) })).status).toBe(404);
    const bad = await fetch(`${server.url}/v1/experiments/5/figures/..%2Fmanifest.json`, { headers: bearer(owner.key) });
    expect(bad.status).toBe(400);
    expect((await fetch(`${server.url}/v1/experiments/6/report`, { headers: bearer(owner.key) })).status).toBe(404);
  });

  it("both routes are in the OpenAPI document", async () => {
    const doc = await json(await fetch(`${server.url}/openapi.json`));
    expect(
      doc.paths["/v1/experiments/{experiment_id}/report"].get.responses["200"].content["application/json"].schema.properties.figures,
    ).toBeDefined();
    expect(doc.paths["/v1/experiments/{experiment_id}/figures/{name}"].get).toBeDefined();
    expect(doc.paths["/v1/setup"].get.security).toEqual([]);
  });
});

describe("sample thumbnails in the validate report", () => {
  let server: TestServer;
  let user: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("vision classification: up to 3 small JPEGs per class, in CSV order, with their path and row", async () => {
    const zipPath = `${user.userId}/samples/scans.zip`;
    const up = await fetch(`${server.url}/v1/files/${zipPath}`, {
      method: "PUT",
      headers: bearer(user.key),
      body: makeZip(await visionDataset({ patients: 8, perPatient: 2 })),
    });
    expect(up.status).toBe(201);
    const res = await fetch(`${server.url}/v1/datasets/validate`, {
      method: "POST",
      headers: bearer(user.key, { "content-type": "application/json" }),
      body: JSON.stringify({ zip_gcloud: zipPath, task: "vision", label_cols: ["label"], images_col: "image" }),
    });
    const report = await json(res);
    expect(report.valid).toBe(true);
    const samples = report.summary.samples.label;
    expect(Object.keys(samples)).toEqual(["0", "1"]);
    // visionDataset: patient p has label p % 2 and images images/p<p>_<i>.png on rows 2, 3, 4, ...
    expect(samples["0"].map((s: { path: string; row: number }) => [s.path, s.row])).toEqual([
      ["images/p0_0.png", 2],
      ["images/p0_1.png", 3],
      ["images/p2_0.png", 6],
    ]);
    expect(samples["1"][0].path).toBe("images/p1_0.png");
    const jpeg = Buffer.from(samples["0"][0].data.replace(/^data:image\/jpeg;base64,/, ""), "base64");
    const meta = await sharp(jpeg).metadata();
    expect(meta.format).toBe("jpeg");
    expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(96);
  });
});

describe("the dashboard is served beside the API", () => {
  it("index.html for client routes, hashed assets with a long cache, and never for API paths", async () => {
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), "builder-dist-"));
    fs.mkdirSync(path.join(dist, "assets"));
    fs.writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>app</title>");
    fs.writeFileSync(path.join(dist, "assets", "index-abc.js"), "console.log(1)");
    const app = express();
    app.use(dashboardRouter(dist));
    app.use((_req, res) => void res.status(404).json({ error: { code: "not_found" } }));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const p of ["/", "/settings/api", "/experiments/3/try"]) {
        const res = await fetch(`${base}${p}`);
        expect(res.status, p).toBe(200);
        expect(await res.text()).toContain("<title>app</title>");
        expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
      }
      const asset = await fetch(`${base}/assets/index-abc.js`);
      expect(asset.headers.get("cache-control")).toContain("immutable");
      for (const p of ["/v1/nope", "/assets/missing.js", "/predict", "/openapi.json", "/metrics"]) {
        const res = await fetch(`${base}${p}`);
        expect(res.status, p).toBe(404);
      }
      fs.rmSync(path.join(dist, "index.html"));
      const notBuilt = await fetch(`${base}/settings/api`);
      expect(notBuilt.status).toBe(503);
      expect(await notBuilt.text()).toContain("make install");
    } finally {
      server.close();
      fs.rmSync(dist, { recursive: true, force: true });
    }
  });

  it("on the real server, unknown API paths stay JSON 404s and /openapi.json is untouched", async () => {
    const server = await startTestServer(primaryTarget());
    try {
      const res = await fetch(`${server.url}/v1/no-such-route`);
      expect(res.status).toBe(404);
      expect((await json(res)).error.code).toBe("not_found");
      expect((await json(await fetch(`${server.url}/openapi.json`))).openapi).toBe("3.1.0");
    } finally {
      await server.teardown();
    }
  });
});
