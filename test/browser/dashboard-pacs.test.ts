import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistDicom } from "../helpers/breastmnist-dicom.js";
import { haveDcmtk } from "../helpers/dcmtk.js";
import { haveOrthanc, startOrthanc, type TestOrthanc } from "../helpers/orthanc.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import {
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// Settings → PACS and Try it's Send to PACS in a real Chromium, against a real Builder and a real Orthanc (DICOMweb,
// basic authentication): the connection saved with its password never shown again, Test connection, the page in
// Spanish, and an image of the PACS predicted by its WADO-RS link with its answer written into its study.
describe.skipIf(!haveChromium || !haveOrthanc || !haveFixturePython || !haveDcmtk)("dashboard: PACS (Chromium, Orthanc)", () => {
  let server: TestServer;
  let orthanc: TestOrthanc;
  let browser: Browser;
  let page: Page;
  let user: UserWithKey;

  beforeAll(async () => {
    ensureDashboardBuilt();
    orthanc = await startOrthanc();
    server = await startTestServer("pglite", { FETCH_ALLOW_HOSTS: "127.0.0.1", PACS_RETRY_BASE_MS: "1" });
    user = await createUserWithKey(server);
    await publishFixture(server, user.userId, 1, servingFixtures().modelDir("vision_binary"));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, user.email, user.password);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    await orthanc?.stop();
  });

  it("saves the connection, keeps the password without showing it, and tests it", async () => {
    await page.goto(`${server.url}/settings/pacs`);
    await page.getByRole("heading", { name: "Settings → PACS" }).waitFor();
    await page.getByLabel("DICOMweb address").fill(orthanc.dicomWeb);
    await page.getByLabel("User name").fill(orthanc.username);
    await page.getByLabel("Password").fill("not-the-password");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await page.getByLabel("Password").inputValue()).toBe("");
    expect(await page.getByLabel("Password").getAttribute("placeholder")).toBe("kept; leave blank to keep it");
    await page.getByRole("button", { name: "Test connection" }).click();
    expect(await page.getByTestId("pacs-test-result").textContent()).toBe("Not connected: the PACS refused the credentials");
    await page.getByLabel("Password").fill(orthanc.password);
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor();
    await page.getByRole("button", { name: "Test connection" }).click();
    await page.getByText("Connected: the PACS answered a DICOMweb search with these credentials.").waitFor();
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "pacs-01-settings");
    expect(await page.content()).not.toContain(orthanc.password);
  });

  it("shows the page in Spanish", async () => {
    await page.evaluate(() => localStorage.setItem("builder.language", "es"));
    await page.goto(`${server.url}/settings/pacs`);
    await page.getByRole("heading", { name: "Ajustes → PACS" }).waitFor();
    await page.getByRole("button", { name: "Probar conexión" }).waitFor();
    expect(await page.getByLabel("Contraseña").getAttribute("placeholder")).toBe("guardada; déjela en blanco para conservarla");
    await screenshot(page, "pacs-01-settings-es");
    await page.evaluate(() => localStorage.removeItem("builder.language"));
  });

  it("Try it: predicts on a WADO-RS link and sends the answer into the image's study", async () => {
    const source = await breastMnistDicom(0);
    const stored = await orthanc.store(source.bytes);
    await page.goto(`${server.url}/experiments/1/try`);
    await page.getByLabel("WADO-RS link of the instance").fill(stored.url);
    expect(await page.getByTestId("pacs-send").isChecked()).toBe(true);
    await page.getByRole("button", { name: "Predict", exact: true }).click();
    await page.getByTestId("pacs-sent").waitFor();
    await page.getByRole("table", { name: "Prediction" }).waitFor();
    await screenshot(page, "pacs-02-try-it-sent");
    await server.services.pacsSendBack.idle();
    const files = await orthanc.studyFiles(stored.study);
    expect(files.map((f) => f.sopClass).sort()).toEqual([
      "1.2.840.10008.5.1.4.1.1.7",
      "1.2.840.10008.5.1.4.1.1.7",
      "1.2.840.10008.5.1.4.1.1.88.33",
    ]);
  });
});
