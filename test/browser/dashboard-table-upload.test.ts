import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diagnosisRows } from "../integration/experiments-fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot, signInThroughPage } from "./browser.js";

// A clinician's first try: the spreadsheet itself on the New experiment page, not a zip of it (issue 38 item 4).
// The page says what was stored, proposes the columns and the dataset passes its checks, as a zip's would.

const EMAIL = "table-upload@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium)("dashboard: a bare CSV upload (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let tmp: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-table-upload-"));
    server = await startTestServer("pglite");
    await server.services.auth.users.create({ email: EMAIL, password: PASSWORD });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("a .csv is accepted as it is: the note says it was stored as the table, the pickers propose, the checks pass", async () => {
    const file = path.join(tmp, "Breast cohort.csv");
    fs.writeFileSync(file, diagnosisRows(120, 5, { name: "age", value: (i) => String(40 + (i % 30)) }).join("\n") + "\n");
    await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    expect(await page.getByTestId("upload-note").textContent()).toContain("Breast_cohort.csv was stored as the dataset's table");
    expect(await page.getByTestId("label-cols").getByLabel(/^diagnosis/).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Check dataset" }).click();
    await page.getByTestId("dataset-report").waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("dataset-report").textContent()).toContain("The dataset passed its checks.");
    await screenshot(page, "42-new-experiment-bare-csv");
  });
});
