import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataRequest, diagnosisRows } from "../integration/experiments-fixtures.js";
import { makeZip } from "../helpers/zips.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import {
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// Experiment names in the dashboard (issue 38, item 1): a named experiment made through the API shows by name in
// the list, is renamed on its own page and found by the list's search box; the New experiment form sends a name.
// The API-made experiments point at zips that were never uploaded: they fail fast, which does not matter here.

const EMAIL = "names-user@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium)("dashboard: experiment names (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let userId: string;
  let key: string;
  let tmp: string;

  const post = (body: unknown) =>
    fetch(`${server.url}/v1/experiments`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const rowTitles = () => page.getByTestId("experiments").locator("tbody td.experiment-name a").allTextContents();

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-names-"));
    server = await startTestServer("pglite");
    userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    key = (await server.services.auth.apiKeys.create(userId, { scopes: ALL_KEY_SCOPES, name: "api" })).key;
    expect(
      (
        await post(
          dataRequest(userId, 1, `${userId}/wdbc/data.zip`, ["f1"], {
            name: "Breast cancer (WDBC)",
            description: "Fine-needle aspirates\nfrom 569 patients",
          }),
        )
      ).status,
    ).toBe(202);
    expect((await post(dataRequest(userId, 2, `${userId}/pima/pima_diabetes.zip`, ["f1"]))).status).toBe(202);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("the list shows names (or 'Experiment #N') with the kind below; the owner renames one on its page", async () => {
    await page.goto(`${server.url}/experiments`);
    await page.getByTestId("experiments").waitFor();
    expect((await rowTitles()).sort()).toEqual(["Breast cancer (WDBC)", "Experiment #2"]);
    const named = page.getByTestId("experiments").locator("tbody tr", { hasText: "Breast cancer (WDBC)" });
    expect(await named.locator("td.experiment-name .muted").textContent()).toBe("data · classification");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "30-experiments-named");

    await page.getByRole("link", { name: "Breast cancer (WDBC)" }).click();
    await page.getByRole("heading", { name: /^Breast cancer \(WDBC\) #1/ }).waitFor();
    expect(await page.locator("p.description").textContent()).toBe("Fine-needle aspirates\nfrom 569 patients");

    await page.getByRole("button", { name: "Edit name and description" }).click();
    const form = page.getByRole("form", { name: "Name and description" });
    expect(await form.getByRole("textbox", { name: "Name", exact: true }).inputValue()).toBe("Breast cancer (WDBC)");
    await form.getByRole("textbox", { name: "Name", exact: true }).fill("Breast cancer, WDBC cohort");
    await form.getByRole("textbox", { name: "Description", exact: true }).fill("Renamed from the dashboard");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: /^Breast cancer, WDBC cohort #1/ }).waitFor();
    expect(await page.locator("p.description").textContent()).toBe("Renamed from the dashboard");
    const stored = (await (await fetch(`${server.url}/v1/experiments/1`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      name: string;
      description: string;
    };
    expect(stored).toMatchObject({ name: "Breast cancer, WDBC cohort", description: "Renamed from the dashboard" });

    // A name over the limit cannot be typed; emptying the name clears it and the page falls back to the number.
    await page.getByRole("button", { name: "Edit name and description" }).click();
    expect(await form.getByRole("textbox", { name: "Name", exact: true }).getAttribute("maxlength")).toBe("120");
    await form.getByRole("textbox", { name: "Name", exact: true }).fill("");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: /^Experiment #1/ }).waitFor();
    await page.getByRole("button", { name: "Edit name and description" }).click();
    await form.getByRole("textbox", { name: "Name", exact: true }).fill("Breast cancer, WDBC cohort");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: /^Breast cancer, WDBC cohort #1/ }).waitFor();
  });

  it("the search box finds experiments by name and by the dataset's file name, taking _ literally", async () => {
    await page.goto(`${server.url}/experiments`);
    await page.getByTestId("experiments").waitFor();
    const search = page.getByRole("search").getByLabel("Search");
    await search.fill("wdbc COHORT");
    await search.press("Enter");
    await page.waitForURL(/q=wdbc\+COHORT/);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="experiments"] tbody tr').length === 1);
    expect(await rowTitles()).toEqual(["Breast cancer, WDBC cohort"]);

    await search.fill("pima_d");
    await page.getByRole("search").getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/q=pima_d/);
    await page.getByTestId("experiments").locator("tbody tr", { hasText: "Experiment #2" }).waitFor();
    expect(await rowTitles()).toEqual(["Experiment #2"]);

    await search.fill("a_c");
    await search.press("Enter");
    await page.getByText("No experiments match “a_c”.").waitFor();
    await screenshot(page, "31-experiments-search");

    // The search lives in the URL: a reload keeps it, and the box shows it.
    await page.goto(`${server.url}/experiments?q=breast`);
    await page.getByTestId("experiments").waitFor();
    expect(await rowTitles()).toEqual(["Breast cancer, WDBC cohort"]);
    expect(await search.inputValue()).toBe("breast");
  });

  it("the New experiment form sends the optional name and description", async () => {
    const file = path.join(tmp, "diabetes.zip");
    fs.writeFileSync(
      file,
      makeZip({ "data.csv": diagnosisRows(60, 3, { name: "noise", value: (_i, rand) => rand().toFixed(3) }).join("\n") + "\n" }),
    );
    await page.goto(`${server.url}/experiments/new`);
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    await page.getByRole("textbox", { name: "Name (optional)", exact: true }).fill("Diabetes from the form");
    await page.getByRole("textbox", { name: "Description (optional)", exact: true }).fill("made in the browser");
    await page.getByTestId("experiment-id").fill("3");
    await page.getByTestId("budget").fill("4");
    await page.getByRole("button", { name: "Build model" }).click();
    await page.getByRole("heading", { name: /^Diabetes from the form #3/ }).waitFor({ timeout: 30_000 });
    expect(await page.locator("p.description").textContent()).toBe("made in the browser");
    // Not trained here: this test is about the labels.
    await fetch(`${server.url}/v1/experiments/3/cancel`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
  }, 90_000);
});
