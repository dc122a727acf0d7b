import fs from "node:fs";
import { Readable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { catalog, flatten } from "../../src/reports/i18n.js";
import { api, dataRequest, waitForStatus } from "../integration/experiments-fixtures.js";
import {
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// Issue 37 item 8 in a real Chromium: the team writes the intended use on the result page (saved with PATCH),
// "Download report" saves the model card, and report.html opened in the browser reads as a printable page
// (screenshots .test-results/screenshots/37-model-card*.png, looked at by a person, see the notebook).

// ../shared/datasets beside the checkout, or BUILDER_SHARED_DATASETS (a worktree's checkout is one folder deeper).
const WDBC =
  [process.env.BUILDER_SHARED_DATASETS, new URL("../../../shared/datasets", import.meta.url).pathname]
    .filter((d): d is string => Boolean(d))
    .map((d) => `${d}/wdbc/data.csv`)
    .find((f) => fs.existsSync(f)) ?? "";
const EMAIL = "reviewer@hospital.example";
const PASSWORD = "a long enough password";
const INTENDED_USE =
  "Second reader for fine-needle aspirates of breast masses in adult women referred to our breast clinic.\nIt flags aspirates for a pathologist's review; it is not for screening and does not replace the pathologist.";

describe.skipIf(!haveChromium || !fs.existsSync(WDBC))("dashboard: model card (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let client: ReturnType<typeof api>;
  let userId = "";
  let zipPath = "";

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    const user = await createUserWithKey(server, { email: EMAIL, password: PASSWORD });
    const csv = fs.readFileSync(WDBC, "utf8");
    userId = user.userId;
    zipPath = `${user.userId}/wdbc/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": csv })));
    client = api(server.url, user.key);
    const body = dataRequest(user.userId, 1, zipPath, csv.split(/\r?\n/, 1)[0].split(",").slice(2), {
      positive_class: "M",
      name: "Breast cancer, WDBC",
      description: "Diagnosis from 30 nuclear features.",
    });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    expect((await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000)).status).toBe("ready");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("the intended use is written and saved on the result page; Download report saves the card with it", async () => {
    await page.goto(`${server.url}/experiments/1`);
    const form = page.getByTestId("intended-use");
    await form.waitFor();
    const save = form.getByRole("button", { name: "Save intended use" });
    expect(await save.isDisabled()).toBe(true); // nothing to save yet
    await form.getByLabel(/Intended use/).fill(INTENDED_USE);
    await save.click();
    await form.getByRole("status").waitFor();
    expect(await form.getByRole("status").textContent()).toBe("Saved");
    await screenshot(page, "37-model-card-result-page");

    // Stored: a reload shows it again.
    await page.reload();
    await page.getByTestId("intended-use").waitFor();
    expect(
      await page
        .getByTestId("intended-use")
        .getByLabel(/Intended use/)
        .inputValue(),
    ).toBe(INTENDED_USE);

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-report").click()]);
    expect(download.suggestedFilename()).toBe("model-card-experiment-1.html");
    const saved = fs.readFileSync(await download.path(), "utf8");
    expect(saved).toContain("Second reader for fine-needle aspirates");
    expect(saved).toContain("<h1>Model card: Breast cancer, WDBC</h1>");
  });

  it("report.html reads as a printable page: every section, figures for M with intervals, axis of text at least 12 px", async () => {
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    const res = await page.goto(`${server.url}/v1/experiments/1/report.html`);
    expect(res?.status()).toBe(200);
    await page.getByRole("heading", { level: 1 }).waitFor();
    expect(await page.title()).toBe("Model card: Breast cancer, WDBC");
    const headings = await page.getByRole("heading", { level: 2 }).allTextContents();
    expect(headings).toEqual([
      "1. Intended use",
      "2. Data source and participants",
      "3. The split",
      "4. Preprocessing",
      "5. Model",
      "6. Performance on the test patients",
      "7. Calibration",
      "8. Warnings and limitations",
      "9. Monitoring after deployment",
    ]);
    const body = (await page.locator("body").textContent()) ?? "";
    expect(body).toContain("Positive class: M.");
    expect(body).toMatch(/a patient is called M when the model's score for M is at least [01]\.\d{3}/);
    expect(body).toMatch(/At a glance \(test patients, 95% intervals\): AUC [01]\.\d{3} \([01]\.\d{3} – [01]\.\d{3}\); Sensitivity for M/);
    expect(body).toMatch(/Sensitivity \(positive class\)\s*[01]\.\d{3}\s*[01]\.\d{3} – [01]\.\d{3}/);
    expect(body).toContain("569"); // rows and patients of WDBC
    expect(body).toMatch(/internal split/);
    // Text a reviewer reads on screen: nothing smaller than 12 px.
    const smallest = await page.evaluate(() =>
      Math.min(
        ...[...document.querySelectorAll("body *")]
          .filter((e) => e.textContent?.trim())
          .map((e) => parseFloat(getComputedStyle(e).fontSize)),
      ),
    );
    expect(smallest).toBeGreaterThanOrEqual(12);
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    expect(errors).toEqual([]);
    await screenshot(page, "37-model-card");
    await page.setViewportSize({ width: 390, height: 844 });
    // On a phone the page fits its width: nothing to scroll sideways (a long fingerprint used to push it to 727 px).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, "37-model-card-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ media: "print" });
    await screenshot(page, "37-model-card-print");
    await page.emulateMedia({ media: "screen" });
  });

  it("issue 53: the card in Spanish, as the dashboard's link asks for it, has no English sentence of the English catalog", async () => {
    await page.goto(`${server.url}/experiments/1`);
    await page.getByTestId("download-report").waitFor();
    expect(await page.getByTestId("download-report").getAttribute("href")).toBe("/v1/experiments/1/report.html?lang=en");
    const res = await page.goto(`${server.url}/v1/experiments/1/report.html?lang=es`);
    expect(res?.headers()["content-language"]).toBe("es");
    expect(await page.title()).toBe("Ficha del modelo: Breast cancer, WDBC");
    expect(await page.getByRole("heading", { level: 2 }).allTextContents()).toEqual([
      "1. Uso previsto",
      "2. Origen de los datos y participantes",
      "3. La partición",
      "4. Preprocesamiento",
      "5. Modelo",
      "6. Rendimiento en los pacientes de prueba",
      "7. Calibración",
      "8. Advertencias y limitaciones",
      "9. Seguimiento tras la puesta en uso",
    ]);
    // The reader's text, less what the team and the pipeline wrote in English (marked lang="en" on the page).
    const body = await page.evaluate(() => {
      const copy = document.body.cloneNode(true) as HTMLElement;
      copy.querySelectorAll('[lang="en"], .intended').forEach((e) => e.remove());
      return copy.textContent ?? "";
    });
    const english = [...flatten(catalog("en", "model-card")).values()]
      .flatMap((m) => m.replace(/<\/?b>/g, "").split(/\{\{\w+\}\}/))
      .map((x) =>
        x
          .trim()
          .replace(/^[,.;:()]+|[,.;:()]+$/g, "")
          .trim(),
      )
      .filter((x) => x.split(/\s+/).length >= 3);
    expect(english.filter((x) => body.includes(x))).toEqual([]);
    expect(body).toMatch(/Sensibilidad para M [01],\d{3} \([01],\d{3} – [01],\d{3}\)/);
    expect(body).toContain("Todavía no se ha hecho ninguna predicción");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "53-model-card-es");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page, "53-model-card-es-phone");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("issue 43: the internal figures say they come from an internal split, and a Retrospective study sits beside them", async () => {
    await page.goto(`${server.url}/experiments/1`);
    const note = page.getByTestId("verdict").locator('li[data-code="internal_test_only"]');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/Note: internal test only\..*test it on data from another period or site/);
    const section = page.getByTestId("retrospective-studies");
    expect(await section.getByTestId("retro-none").textContent()).toMatch(/No Retrospective study of this model yet/);
    expect(await section.getByTestId("retro-internal").textContent()).toMatch(/AUC [01]\.\d{3} \(95% interval [01]\.\d{3}–[01]\.\d{3}\)/);

    // A Retrospective study of the model on (here, the same) other data, run as a user would through the API.
    const body = dataRequest(userId, 2, zipPath, fs.readFileSync(WDBC, "utf8").split(/\r?\n/, 1)[0].split(",").slice(2), {
      study_type: "Retrospective",
      source_experiment_id: 1,
      name: "Second site, 2025",
    });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    const retro = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(retro.status).toBe("ready");

    await page.reload();
    const row = page.getByTestId("retrospective-studies").getByTestId("retro-study");
    await row.waitFor();
    const auc = retro.metrics.auc;
    const text = (await row.textContent()) ?? "";
    expect(text).toContain("Retrospective #2: Second site, 2025");
    expect(text).toContain(`AUC ${auc.value.toFixed(3)} (95% interval ${auc.ci_low.toFixed(3)}–${auc.ci_high.toFixed(3)})`);
    expect(text).toContain("569");
    expect(await page.getByTestId("retro-none").count()).toBe(0);
    expect(await page.getByTestId("verdict").locator('li[data-code="internal_test_only"]').textContent()).toMatch(
      /One Retrospective study of this model on other data is shown beside these figures/,
    );
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await row.scrollIntoViewIfNeeded();
    await screenshot(page, "43-retrospective-beside-internal");
    // The study's own page links back and carries no internal-split note.
    await row.getByRole("link").click();
    await page.getByTestId("verdict").waitFor();
    expect(await page.locator('li[data-code="internal_test_only"]').count()).toBe(0);
    expect(await page.getByTestId("retrospective-studies").count()).toBe(0);
  });
});
