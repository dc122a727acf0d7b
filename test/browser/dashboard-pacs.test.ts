import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experiments } from "../../src/db/schema.js";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { breastMnistDicom } from "../helpers/breastmnist-dicom.js";
import { makeZip } from "../helpers/zips.js";
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
// Spanish, and an image of the PACS predicted by its WADO-RS link with its answer written into its study; Import from
// PACS on the new-experiment form (progress, the rows that failed, the dataset handed to the form), the model page's
// rule for scoring new studies, and Send to PACS on batch scoring.
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
    // The model page shows a ready experiment's results (the auto-score card among them) only beside its metrics.
    const manifest = JSON.parse(fs.readFileSync(path.join(servingFixtures().modelDir("vision_binary"), "manifest.json"), "utf8"));
    await server.services.db.update(experiments).set({ metrics: manifest.metrics.test }).where(eq(experiments.experimentId, 1));
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

  it("Import from PACS: a CSV of UIDs becomes the form's dataset, with the rows that failed named in plain words", async () => {
    const lines = ["uid,label,site"];
    for (let p = 0; p < 12; p++) {
      const study = await orthanc.store((await breastMnistDicom(40 + p, { name: "Paciente^Prueba", id: `IMP-${p}` })).bytes);
      lines.push(`${study.study},${p % 2 ? "malignant" : "benign"},north`);
    }
    lines.push("1.2.826.0.1.999999.7,benign,south", "not-a-uid,benign,south");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-import-ui-"));
    const csv = path.join(dir, "breast-uids.csv");
    fs.writeFileSync(csv, lines.join("\n") + "\n");
    await page.goto(`${server.url}/experiments/new`);
    await page.getByText("Import from PACS: a CSV of study, series or instance UIDs and their labels").click();
    await page.getByTestId("pacs-csv").setInputFiles(csv);
    expect(await page.getByTestId("pacs-uid-col").inputValue()).toBe("uid");
    expect(await page.getByTestId("pacs-label-col").inputValue()).toBe("label");
    await page.getByTestId("pacs-import-start").click();
    await page.getByText("Imported 12 images from 14 rows; 2 could not be used. The dataset is below.").waitFor({ timeout: 60_000 });
    const failed = await page.getByTestId("pacs-import-failed").textContent();
    expect(failed).toContain("2 rows could not be used (the others were imported):");
    expect(failed).toContain("Row 13 (1.2.826.0.1.999999.7): no study, series or instance with this UID in the PACS");
    expect(failed).toContain("Row 14 (not-a-uid): not a DICOM UID (digits and dots, at most 64)");
    // The dataset is the form's now: its columns are offered, the images column proposed.
    await page.getByRole("form").waitFor();
    expect(await page.getByTestId("uploaded").textContent()).toMatch(/pacs-[a-z0-9]+\/breast-uids\.zip/);
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "pacs-03-import");
    // In Spanish, the rows' reasons are Spanish too.
    await page.evaluate(() => localStorage.setItem("builder.language", "es"));
    await page.goto(`${server.url}/experiments/new`);
    await page.getByText("Importar del PACS: un CSV de UID de estudios, series o instancias y sus etiquetas").click();
    await page.getByTestId("pacs-csv").setInputFiles(csv);
    await page.getByTestId("pacs-import-start").click();
    await page
      .getByText("Se importaron 12 imágenes de 14 filas; 2 no se pudieron usar. El conjunto de datos está abajo.")
      .waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("pacs-import-failed").textContent()).toContain(
      "Fila 13 (1.2.826.0.1.999999.7): el PACS no tiene ningún estudio, serie o instancia con este UID",
    );
    await screenshot(page, "pacs-03-import-es");
    await page.evaluate(() => localStorage.removeItem("builder.language"));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("the model page turns on the rule for scoring new studies, and the rule is the API's", async () => {
    await page.goto(`${server.url}/experiments/1`);
    const card = page.getByTestId("pacs-auto-score");
    await card.getByRole("heading", { name: "Score new PACS studies as they arrive" }).waitFor();
    await page.getByTestId("auto-score-enabled").check();
    await page.getByTestId("auto-score-modality").fill("US");
    await page.getByTestId("auto-score-body-part").fill("BREAST");
    await page.getByTestId("auto-score-save").click();
    await page.getByText("Saved: new images that match are scored from now on.").waitFor();
    const rule = await fetch(`${server.url}/v1/models/1/pacs/auto-score`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(await rule.json()).toMatchObject({ enabled: true, modality: "US", body_part: "BREAST", series_description: null });
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "pacs-04-auto-score");
    await page.getByTestId("auto-score-enabled").uncheck();
    await page.getByTestId("auto-score-save").click();
    await page.getByText("Saved: new images are no longer scored.").waitFor();
  });

  it("batch scoring sends each DICOM's answer into its study when asked", async () => {
    const a = await breastMnistDicom(60);
    const stored = await orthanc.store(a.bytes);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pacs-batch-ui-"));
    const zip = path.join(dir, "scans.zip");
    fs.writeFileSync(zip, makeZip({ "scan.dcm": a.bytes }));
    await page.goto(`${server.url}/experiments/1/try`);
    await page.getByTestId("batch-send-back").check();
    await page.getByTestId("batch-input").setInputFiles(zip);
    await page.getByTestId("batch-pacs").waitFor({ timeout: 60_000 });
    expect(await page.getByTestId("batch-pacs").textContent()).toBe("1 structured report written into the PACS.");
    await screenshot(page, "pacs-05-batch-send-back");
    expect((await orthanc.studyFiles(stored.study)).filter((f) => f.sopClass.endsWith(".88.33"))).toHaveLength(1);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
