import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diagnosisRows } from "../integration/experiments-fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot, signInThroughPage } from "./browser.js";

// A clinician's first try: the spreadsheet itself on the New experiment page, not a zip of it (issue 38 item 4).
// The page says what was stored, proposes the columns and the dataset passes its checks, as a zip's would. And for a
// team without data at hand: a template CSV per layout, and a public sample table put in the user's folder.

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
    expect(
      await page
        .getByTestId("label-cols")
        .getByLabel(/^diagnosis/)
        .isChecked(),
    ).toBe(true);
    await page.getByRole("button", { name: "Check dataset" }).click();
    await page.getByTestId("dataset-report").waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("dataset-report").textContent()).toContain("The dataset passed its checks.");
    await screenshot(page, "42-new-experiment-bare-csv");
  });

  it("a template downloads as a CSV in the data-task layout; the sample loads with its licence and the pickers propose", async () => {
    await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
    await page.getByText("No dataset at hand?").click();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Table of clinical variables" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("builder-template-table.csv");
    const template = fs.readFileSync((await download.path())!, "utf8").split("\n");
    expect(template[0]).toBe("patient_id,diagnosis,age,glucose,bmi");

    await page.getByRole("button", { name: "Try with Breast Cancer Wisconsin (Diagnostic)" }).click();
    await page.getByTestId("sample-licence").waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("sample-licence").textContent()).toContain("CC BY 4.0");
    expect(await page.getByTestId("uploaded").textContent()).toContain("/samples/breast-cancer-wisconsin.zip");
    expect(
      await page
        .getByTestId("label-cols")
        .getByLabel(/^diagnosis/)
        .isChecked(),
    ).toBe(true);
    expect(await page.getByTestId("data-cols").getByRole("checkbox", { checked: true }).count()).toBe(30);
    await screenshot(page, "43-new-experiment-sample");
  });
});
