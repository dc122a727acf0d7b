import fs from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experiments, models } from "../../src/db/schema.js";
import { limiterEnv } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { fixtureRequest } from "../fixtures/serving/publish.js";
import { dataRequest } from "../integration/experiments-fixtures.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot, signInThroughPage } from "./browser.js";

// Issue 50's second done-when, two users in two Chromium contexts: Ana (English) makes a workspace from the switcher
// and adds Ben as a viewer on the Members page; Ben (Spanish) switches to it, sees Ana's experiment and its result,
// with who built it; the page shows him no Delete, Edit or build controls but says why (his role, in his words), and the
// server still refuses a delete and a build (403 with the permission's code); Ana makes him an editor
// and his Retrospective study on her model is accepted; Ana's predict-only key of the workspace (Settings → API)
// predicts and may not list; Ana removes Ben: his next page load is his personal workspace and his key of the
// workspace is refused at once, on a second replica too (Postgres only: PGlite is one process).

const ANA = { email: "ana@team.example", password: "ana's long enough password" };
const BEN = { email: "ben@team.example", password: "ben's long enough password" };
const ROW = [63, 1, 27.5, 2]; // the tabular_binary fixture's four columns

type Answer = { status: number; body: any };

describe.skipIf(!haveChromium || !haveFixturePython)("dashboard: a team of two in two browser contexts (Chromium)", () => {
  const target = primaryTarget();
  let server: TestServer;
  let replica: TestServer | undefined;
  let browser: Browser;
  let ana: Page;
  let benContext: BrowserContext;
  let ben: Page;
  let benId = "";
  let ws = "";

  /** A request from Ben's page, as the dashboard makes it: his cookies, his CSRF token, the workspace he shows. */
  const fromBen = (method: string, url: string, body?: unknown): Promise<Answer> =>
    ben.evaluate(
      async ({ method, url, body }) => {
        const { csrf_token } = await (await fetch("/v1/session")).json();
        const headers: Record<string, string> = { "x-csrf-token": csrf_token, "content-type": "application/json" };
        const chosen = localStorage.getItem("builder.workspace");
        if (chosen) headers["x-builder-workspace"] = chosen;
        const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await r.text();
        return { status: r.status, body: text ? JSON.parse(text) : null };
      },
      { method, url, body },
    );
  const withKey = async (s: TestServer, key: string, method: string, url: string, body?: unknown): Promise<Answer> => {
    const r = await fetch(`${s.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    ensureDashboardBuilt();
    const env = { API_KEY_CACHE_TTL_S: "60", ...limiterEnv(target) };
    server = await startTestServer(target, env);
    if (target === "postgres") replica = await startTestServer("pglite", { ...env, DATABASE_URL: server.services.config.DATABASE_URL! });
    await server.services.auth.users.create(ANA);
    benId = (await server.services.auth.users.create(BEN)).id;
    browser = await launchChromium();
    ana = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" });
    benContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "es-ES" });
    ben = await benContext.newPage();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await replica?.teardown();
    await server?.teardown();
  });

  it("Ana makes a workspace from the switcher and adds Ben as a viewer on the Members page", async () => {
    await signInThroughPage(ana, server.url, ANA.email, ANA.password);
    await ana.getByTestId("workspace-switcher").selectOption("new");
    await ana.getByPlaceholder("e.g. Cardiology research").fill("Cardiology");
    await ana.getByRole("button", { name: "Create and switch to it" }).click();
    await ana.getByRole("heading", { name: "Members of Cardiology" }).waitFor();
    ws = (await ana.evaluate(() => localStorage.getItem("builder.workspace")))!;
    expect(ws).toMatch(/^[0-9a-f-]{36}$/);
    await ana.getByLabel("Their e-mail").fill(BEN.email);
    await ana.getByRole("form", { name: "Add a member" }).getByRole("combobox").selectOption("viewer");
    await ana.getByRole("button", { name: "Add", exact: true }).click();
    await ana.getByText(`${BEN.email} is now a member (Viewer).`).waitFor();
    await screenshot(ana, "team-01-ana-added-ben-viewer");

    // Ana's experiment in the workspace with a published model, its files under the workspace's own prefix.
    const { db, bucket } = server.services;
    const anaId = (await server.services.auth.users.findByEmail(ANA.email))!.id;
    const modelDir = servingFixtures().modelDir("tabular_binary");
    const storePath = `models/${ws}/1/v1`;
    for (const f of ["model.onnx", "manifest.json"]) await bucket.uploadFile(path.join(modelDir, f), `${storePath}/${f}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, "manifest.json"), "utf8"));
    const [exp] = await db
      .insert(experiments)
      .values({
        userId: anaId,
        workspaceId: ws,
        experimentId: 1,
        request: { ...fixtureRequest(anaId, 1, manifest), zip_gcloud: `${ws}/study/data.zip` },
        requestHash: "team-1",
        status: "ready",
        name: "Shared cohort",
        metrics: manifest.metrics.test, // the result section shows once the test metrics are there
      })
      .returning();
    await db.insert(models).values({
      userId: anaId,
      workspaceId: ws,
      experimentUuid: exp.id,
      experimentId: 1,
      version: 1,
      kind: manifest.kind,
      storePath,
      manifest,
    });
  });

  it("Ben, in Spanish, switches to it, sees Ana's experiment, who built it and its result; no Delete nor build for a viewer", async () => {
    expect((await benContext.request.post(`${server.url}/v1/session`, { data: BEN })).status()).toBe(200);
    await ben.goto(`${server.url}/experiments`);
    const switcher = ben.getByTestId("workspace-switcher");
    await switcher.waitFor();
    await switcher.selectOption({ label: "Cardiology · Lector" });
    await ben.getByText("Shared cohort").first().waitFor();
    // The list: who built it, and no New experiment for a viewer but the reason in its place.
    await ben.getByRole("columnheader", { name: "Construido por" }).waitFor();
    expect(await ben.getByTestId("built-by").first().textContent()).toBe(ANA.email);
    expect(await ben.locator(".title-row").getByRole("link").count()).toBe(0);
    expect(await ben.getByTestId("not-allowed").textContent()).toBe("Su rol (lector) no permite construir o cambiar experimentos.");
    await screenshot(ben, "team-02-ben-es-experiments");
    await ben.getByText("Shared cohort").first().click();
    await ben.getByTestId("experiment").waitFor();
    await ben.getByTestId("intended-use").waitFor();

    // The result page: built by Ana; no Delete, no Edit, no Test on new data, the intended use read-only; why, in words.
    expect(await ben.getByTestId("built-by").textContent()).toBe(`construido por ${ANA.email}`);
    expect(await ben.getByTestId("delete-experiment").count()).toBe(0);
    expect(await ben.getByRole("link", { name: "Probar con datos nuevos" }).count()).toBe(0);
    expect(await ben.getByTestId("intended-use").getByRole("textbox").getAttribute("readonly")).not.toBeNull();
    expect(await ben.getByRole("button", { name: "Editar el nombre y la descripción" }).count()).toBe(0);
    const reasons = await ben.getByTestId("not-allowed").allTextContents();
    expect(reasons).toContain("Su rol (lector) no permite eliminar experimentos.");
    expect(reasons).toContain("Su rol (lector) no permite construir o cambiar experimentos.");
    expect(reasons).toContain("Su rol (lector) no permite escribir el uso previsto.");
    await screenshot(ben, "team-03-ben-es-result");
    await ben.setViewportSize({ width: 390, height: 844 });
    await screenshot(ben, "team-03-ben-es-result-phone");
    await ben.setViewportSize({ width: 1280, height: 800 });
    // The server stays the guard: the same requests from his page are refused with the permission's code.
    const del = await fromBen("DELETE", "/v1/experiments/1");
    expect(del).toMatchObject({ status: 403, body: { error: { code: "missing_permission_experiment_delete" } } });
    const build = await fromBen("POST", "/v1/experiments", dataRequest(benId, 2, `${ws}/study/data.zip`, ["f1"]));
    expect(build).toMatchObject({ status: 403, body: { error: { code: "missing_permission_experiment_build" } } });
    expect((await fromBen("GET", "/v1/experiments/1")).body).toMatchObject({ experiment_id: 1, status: "ready" });
  });

  it("Ana makes Ben an editor; his Retrospective study on her model is accepted", async () => {
    await ana.getByLabel(`Role of ${BEN.email}`).selectOption("editor");
    await expect.poll(async () => ana.getByLabel(`Role of ${BEN.email}`).inputValue()).toBe("editor");
    await ben.reload();
    await ben.getByTestId("experiment").waitFor();
    expect(await ben.getByTestId("workspace-switcher").locator("option:checked").textContent()).toBe("Cardiology · Editor");
    // An editor may delete and build: the controls are back; only the intended use stays a reviewer's or owner's.
    await ben.getByTestId("delete-experiment").waitFor();
    expect(await ben.getByTestId("not-allowed").allTextContents()).toEqual(["Su rol (editor) no permite escribir el uso previsto."]);
    // The zip is not there: the request is accepted (202) and the build itself fails later; what matters is no 403.
    const study = await fromBen(
      "POST",
      "/v1/experiments",
      dataRequest(benId, 2, `${ws}/study/data.zip`, ["f1"], { study_type: "Retrospective", source_experiment_id: 1 }),
    );
    expect(study.status).toBe(202);
  });

  it("Ana's predict-only key of the workspace (Settings → API) predicts and may not list experiments", async () => {
    await ana.goto(`${server.url}/settings/api`);
    await ana.getByTestId("key-scopes").waitFor(); // the form (the workspace has no key yet, so no list)
    expect(await ana.getByTestId("workspace-switcher").locator("option:checked").textContent()).toBe("Cardiology · Owner");
    await ana.getByLabel("Name").fill("ward program");
    expect(
      await ana
        .getByTestId("key-scopes")
        .getByLabel(/predict:/)
        .isChecked(),
    ).toBe(true);
    await ana.getByRole("button", { name: "Generate new key" }).click();
    const key = (await ana.getByTestId("new-key-value").textContent())!.trim();
    expect(await ana.getByTestId("new-key").textContent()).toContain("Scopes: predict.");
    await screenshot(ana, "team-05-ana-predict-key");
    expect((await withKey(server, key, "POST", "/v1/experiments/1/predict", { message: ROW })).status).toBe(201);
    expect(await withKey(server, key, "GET", "/v1/experiments")).toMatchObject({
      status: 403,
      body: { error: { code: "api_key_scope_missing" } },
    });
  });

  it(
    "Ana removes Ben: his next page load is his personal workspace and his key of the workspace is refused at once",
    { timeout: 90_000 },
    async () => {
      // An editor may not make keys (key.manage is an owner's); his key of the workspace is made by the service.
      expect(await fromBen("POST", "/v1/api-keys", { name: "mine", scopes: ["read"] })).toMatchObject({
        status: 403,
        body: { error: { code: "missing_permission_key_manage" } },
      });
      const { key } = await server.services.auth.apiKeys.create(benId, { name: "ben's reader", workspaceId: ws, scopes: ["read"] });
      expect((await withKey(server, key, "GET", "/v1/experiments/1")).status).toBe(200);
      if (replica) expect((await withKey(replica, key, "GET", "/v1/experiments/1")).status).toBe(200); // now in its cache

      await ana.goto(`${server.url}/settings/members`);
      await ana.getByRole("heading", { name: "Members of Cardiology" }).waitFor();
      await ana.getByRole("button", { name: "Remove" }).first().click();
      await ana.getByRole("button", { name: "Yes, remove" }).click();
      await ana.getByText(`${BEN.email} was removed; 1 API key of theirs stopped working.`).waitFor();
      await screenshot(ana, "team-06-ana-removed-ben");

      expect(await withKey(server, key, "GET", "/v1/me")).toMatchObject({ status: 403, body: { error: { code: "api_key_revoked" } } });
      if (replica) {
        const t0 = Date.now();
        let answer = await withKey(replica, key, "GET", "/v1/me");
        while (answer.status === 200 && Date.now() - t0 < 5_000) {
          await new Promise((r) => setTimeout(r, 5));
          answer = await withKey(replica, key, "GET", "/v1/me");
        }
        expect(answer).toMatchObject({ status: 403, body: { error: { code: "api_key_revoked" } } });
        expect(Date.now() - t0).toBeLessThan(5_000); // the cache TTL is 60 s: only the revocation channel explains this
      }

      // Ben is still on Ana's result page: reloaded, it opens in his personal workspace, which has no experiment 1.
      await ben.reload();
      await expect
        .poll(
          async () =>
            (await ben.getByTestId("workspace-switcher").count())
              ? ben.getByTestId("workspace-switcher").locator("option:checked").textContent()
              : null,
          { timeout: 15_000 },
        )
        .toBe("Personal · Propietario");
      expect(await ben.getByText("workspace_not_found").count()).toBe(0); // no dead end: the page loads, in his own workspace
      await screenshot(ben, "team-07-ben-es-reloaded-after-removal");
      await ben.goto(`${server.url}/experiments`);
      await ben.getByRole("heading", { name: "Experimentos" }).waitFor();
      expect(await ben.getByTestId("workspace-switcher").locator("option:checked").textContent()).toBe("Personal · Propietario");
      expect(await ben.evaluate(() => localStorage.getItem("builder.workspace"))).toBeNull();
      expect(await ben.getByText("Shared cohort").count()).toBe(0);
      await screenshot(ben, "team-08-ben-es-back-in-personal");
    },
  );
});
