import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { diagnosisRows } from "../integration/experiments-fixtures.js";
import { makeZip, visionDataset } from "../helpers/zips.js";
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

// Upload → report → build → results → try it, in a real Chromium against a real Builder (PGlite, in-process
// runner, the real Python pipeline). The training is a tiny table in fastest mode with a 4 s budget.

const EMAIL = "builder-user@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium)("dashboard: experiments (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let userId: string;
  let tmp: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-browser-"));
    server = await startTestServer("pglite");
    userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Waits for a locator; an error box appearing first fails the test with its text (message and request id). */
  async function waitOrAlert(target: ReturnType<Page["getByTestId"]>, timeout = 30_000) {
    const alert = page.getByRole("alert").first();
    await Promise.race([
      target.waitFor({ timeout }),
      alert.waitFor({ timeout }).then(async () => {
        throw new Error(`the page shows an error: ${await alert.textContent()}`);
      }),
    ]);
  }

  async function uploadOnNewExperiment(file: string) {
    await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
    await page.getByTestId("zip-input").setInputFiles(file);
    // Wait for this upload's own status: an earlier upload's marker may still be on the page until it starts.
    await page
      .getByTestId("upload-status")
      .filter({ hasText: /^100% · .* · uploaded$/ })
      .waitFor({ timeout: 30_000 });
    await page.getByTestId("uploaded").waitFor();
  }

  it("a tabular zip: upload with progress, report, build in fastest mode to ready, metrics, figures, a prediction", async () => {
    const file = path.join(tmp, "diagnosis.zip");
    // noise is unknown (NA) in one row of seven: a numeric column with missing values, which Try it may leave empty.
    const noise = (i: number, rand: () => number) => (i % 7 === 3 ? "NA" : rand().toFixed(3));
    fs.writeFileSync(file, makeZip({ "data.csv": diagnosisRows(150, 11, { name: "noise", value: noise }).join("\n") + "\n" }));
    await uploadOnNewExperiment(file);

    // The pickers propose: label diagnosis (by name), inputs f1, f2, noise (the patient id column is left out).
    expect(
      await page
        .getByTestId("label-cols")
        .getByLabel(/^diagnosis/)
        .isChecked(),
    ).toBe(true);
    for (const c of ["f1", "f2", "noise"])
      expect(
        await page
          .getByTestId("data-cols")
          .getByLabel(new RegExp(`^${c} `))
          .isChecked(),
      ).toBe(true);
    expect(await page.getByTestId("data-cols").getByLabel(/^id /).count()).toBe(0);
    expect(Number(await page.getByTestId("experiment-id").inputValue())).toBe(1);

    await page.getByRole("button", { name: "Check dataset" }).click();
    const report = page.getByTestId("dataset-report");
    await waitOrAlert(report);
    expect(await report.textContent()).toContain("The dataset passed its checks.");
    expect(await page.getByRole("table", { name: "Class counts of diagnosis" }).textContent()).toMatch(/B\d+M\d+|M\d+B\d+/);
    await screenshot(page, "10-new-experiment-report");

    await page.getByTestId("budget").fill("4");
    await page.getByRole("button", { name: "Build model" }).click();
    await waitOrAlert(page.getByTestId("experiment"));
    expect(page.url()).toBe(`${server.url}/experiments/1`);
    // The page follows the run without a reload: it reaches ready by itself (server-sent events).
    await page
      .getByRole("progressbar", { name: "Experiment progress" })
      .waitFor()
      .catch(() => undefined);
    await screenshot(page, "11a-experiment-running");
    await page.locator('[data-testid="experiment"][data-status="ready"]').waitFor({ timeout: 150_000 });

    const metrics = page.getByTestId("metrics");
    await metrics.waitFor();
    expect(await metrics.textContent()).toMatch(/AUC[01]\.\d{3} \([01]\.\d{3}–[01]\.\d{3}\)/);
    // The figures load lazily and sit below the fold (the operating-point panel is above them): scroll to them first.
    await page.getByTestId("figures").scrollIntoViewIfNeeded();
    await page.getByTestId("figures").locator("img").first().waitFor();
    const figures = await page
      .getByTestId("figures")
      .locator("img")
      .evaluateAll((imgs) =>
        Promise.all(
          (imgs as HTMLImageElement[]).map((i) =>
            Object.assign(i, { loading: "eager" })
              .decode()
              .then(
                () => i.naturalWidth,
                () => 0,
              ),
          ),
        ),
      );
    expect(figures.length).toBeGreaterThanOrEqual(3);
    expect(figures.every((w) => w > 0)).toBe(true);
    await screenshot(page, "11-experiment-ready");

    await page.getByRole("link", { name: "Try it" }).click();
    await page.getByLabel("f1").fill("9.5");
    await page.getByLabel("f2").fill("4.5");
    await page.getByLabel("noise").fill("0.5");
    await page.getByRole("button", { name: "Predict" }).click();
    const prediction = page.getByTestId("prediction");
    await prediction.waitFor();
    // f1 + 2·f2 = 18.5, far past the rule's 10: the model says M.
    const predicted = await prediction
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent!.trim())));
    expect(predicted.map((r) => r[0]).sort()).toEqual(["B", "M"]);
    expect(predicted.find((r) => r[3] === "yes")?.[0]).toBe("M");
    const curl = (await page.getByTestId("snippet-curl").textContent())!;
    expect(curl).toContain("$BUILDER_API_KEY");
    expect(curl).toContain(`${server.url}/v1/experiments/1/predict`);
    expect(curl).toContain('{"message":[9.5,4.5,0.5]}');
    expect(curl).not.toMatch(/bld_/);
    await screenshot(page, "12-try-tabular");

    // noise had NA in training: left empty, it is sent as null (f1 and f2, which had none, stay required).
    expect(await page.getByLabel("f1").getAttribute("required")).not.toBeNull();
    await page.getByLabel("noise").fill("");
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/v1/experiments/1/predict") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Predict" }).click(),
    ]);
    expect(answer.request().postDataJSON()).toEqual({ message: [9.5, 4.5, null] });
    expect(answer.status()).toBe(201);
    expect(await page.getByTestId("snippet-curl").textContent()).toContain('{"message":[9.5,4.5,null]}');
    await expect.poll(() => page.getByRole("alert").count()).toBe(0);
    const withGap = await page
      .getByTestId("prediction")
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent!.trim())));
    expect(withGap.find((r) => r[3] === "yes")?.[0]).toBe("M");
  }, 240_000);

  it("Test on new data: a Retrospective study of experiment 1, its metrics beside the internal ones", async () => {
    await page.goto(`${server.url}/experiments/1`);
    await page.getByRole("link", { name: "Test on new data" }).click();
    await page.getByRole("heading", { name: "Test experiment #1 on new data" }).waitFor();
    const file = path.join(tmp, "new-site.zip");
    // f2 is unknown (NA) in one row, where the training data had no gaps: scored with the training median, and said so.
    const rows = diagnosisRows(80, 23, { name: "noise", value: (_i, rand) => rand().toFixed(3) });
    rows[6] = rows[6]
      .split(",")
      .map((v, j) => (j === 3 ? "NA" : v))
      .join(",");
    fs.writeFileSync(file, makeZip({ "data.csv": rows.join("\n") + "\n" }));
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor();
    // The source's columns are kept: only the data is new.
    expect(
      await page
        .getByTestId("label-cols")
        .getByLabel(/^diagnosis/)
        .isChecked(),
    ).toBe(true);
    expect(
      await page
        .getByTestId("data-cols")
        .getByLabel(/^noise /)
        .isChecked(),
    ).toBe(true);
    await page.getByRole("button", { name: "Start the test" }).click();
    await waitOrAlert(page.getByTestId("experiment"));
    await page.locator('[data-testid="experiment"][data-status="ready"]').waitFor({ timeout: 120_000 });
    const metrics = page.getByTestId("metrics");
    await metrics.waitFor();
    expect(await metrics.locator("thead").textContent()).toContain("Internal test of #1");
    expect(await metrics.textContent()).toMatch(/AUC[01]\.\d{3} \([01]\.\d{3}–[01]\.\d{3}\)[01]\.\d{3}/);
    const unseen = page.getByTestId("unseen-values");
    await unseen.waitFor();
    expect(await unseen.textContent()).toMatch(
      /f2: 1 of 80 rows held values the model never saw in training \('NA'\); these were scored with the training median \([\d.]+\)\./,
    );
    await screenshot(page, "12b-retrospective-ready");
  }, 180_000);

  it("Cancel stops a running build", async () => {
    const file = path.join(tmp, "slow.zip");
    fs.writeFileSync(
      file,
      makeZip({ "data.csv": diagnosisRows(150, 13, { name: "noise", value: (_i, rand) => rand().toFixed(3) }).join("\n") + "\n" }),
    );
    await uploadOnNewExperiment(file);
    await page.getByTestId("budget").fill("300");
    await page.getByRole("button", { name: "Build model" }).click();
    await waitOrAlert(page.getByTestId("experiment"));
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.locator('[data-testid="experiment"][data-status="cancelled"]').waitFor({ timeout: 60_000 });
    expect(await page.locator(".history").textContent()).toContain("cancelled");
  }, 90_000);

  it("a broken zip: the report lists each problem with its row and column", async () => {
    const rows = diagnosisRows(60, 5, { name: "noise", value: (_i, rand) => rand().toFixed(3) });
    rows[3] = rows[3].replace(/^(\d+),[MB],/, "$1,,"); // row 4 in spreadsheet terms: no label (a warning)
    rows[6] = rows[6].replace(/^\d+,/, ","); // row 7: no patient id
    const file = path.join(tmp, "broken.zip");
    fs.writeFileSync(file, makeZip({ "data.csv": rows.join("\n") + "\n" }));
    await uploadOnNewExperiment(file);
    await page.getByRole("button", { name: "Check dataset" }).click();
    const report = page.getByTestId("dataset-report");
    await report.waitFor();
    expect(await report.textContent()).toContain("The dataset has errors to fix");
    const cells = await page
      .getByRole("table", { name: "Dataset problems" })
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
    const has = (severity: string, row: string, column: string) => cells.some((c) => c[0] === severity && c[1] === row && c[2] === column);
    // An unlabelled row is left out with a warning; a row without a patient id cannot be split: an error.
    expect(has("warning", "4", "diagnosis"), JSON.stringify(cells)).toBe(true);
    expect(has("error", "7", "id"), JSON.stringify(cells)).toBe(true);
    expect(await page.getByRole("button", { name: "Build model" }).isDisabled()).toBe(true);
    await screenshot(page, "13-broken-zip-report");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);

    // Built anyway (through the API), the experiment ends invalid_dataset and its page says why, with the report.
    const zipPath = (await page.getByTestId("uploaded").locator("code").textContent())!;
    const { key } = await server.services.auth.apiKeys.create(userId, { scopes: ALL_KEY_SCOPES, name: "api" });
    const res = await fetch(`${server.url}/v1/experiments`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        zip_gcloud: zipPath,
        label_cols: ["diagnosis"],
        data_cols: ["f1", "f2"],
        model_type: 0,
        optimization_type: 1,
        experiment_id: 50,
        user_id: userId,
        study_type: "Builder",
        task: "data",
        optimization_metric: "AUC",
      }),
    });
    expect(res.status).toBe(202);
    await page.goto(`${server.url}/experiments/50`);
    await page.locator('[data-testid="experiment"][data-status="invalid_dataset"]').waitFor({ timeout: 60_000 });
    expect(await page.getByRole("alert").first().textContent()).toContain("The dataset did not pass its checks");
    expect(await page.getByRole("table", { name: "Dataset problems" }).textContent()).toContain("row 7 has no patient id");
    await screenshot(page, "13b-invalid-experiment");
  });

  it("an image zip: the pickers choose task vision and the image column, and the report shows sample images per class", async () => {
    const file = path.join(tmp, "scans.zip");
    fs.writeFileSync(file, makeZip(await visionDataset({ patients: 8, perPatient: 2 })));
    await uploadOnNewExperiment(file);
    expect(await page.getByRole("combobox", { name: /^Task/ }).inputValue()).toBe("vision");
    expect(await page.getByRole("combobox", { name: /^Images column/ }).inputValue()).toBe("image");
    expect(
      await page
        .getByTestId("label-cols")
        .getByLabel(/^label /)
        .isChecked(),
    ).toBe(true);
    expect(
      await page
        .getByTestId("label-cols")
        .getByLabel(/^diagnosis /)
        .isChecked(),
    ).toBe(false);
    await page.getByRole("button", { name: "Check dataset" }).click();
    await waitOrAlert(page.getByTestId("samples"));
    expect(await page.getByTestId("dataset-report").textContent()).toContain("The dataset passed its checks.");
    const shown = await page
      .getByTestId("samples")
      .locator("img")
      .evaluateAll((imgs) => (imgs as HTMLImageElement[]).map((i) => [i.alt, i.naturalWidth]));
    expect(shown.length).toBe(6);
    expect(shown[0]).toEqual(["0: images/p0_0.png (row 2)", 8]);
    await screenshot(page, "13d-vision-report-samples");
  });

  it("the experiments list filters by status and task", async () => {
    await page.goto(`${server.url}/experiments`);
    const table = page.getByTestId("experiments");
    await table.waitFor();
    const ids = async () => (await table.locator("tbody tr td:first-child").allTextContents()).sort();
    expect(await ids()).toEqual(["#1", "#2", "#3", "#50"]);
    await page.getByLabel("Status").selectOption("problems");
    await page.waitForURL(/status=problems/);
    await table.locator("tbody tr").first().waitFor();
    expect(await ids()).toEqual(["#50"]);
    await page.getByLabel("Status").selectOption("ready");
    await page.waitForURL(/status=ready/);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="experiments"] tbody tr').length === 2);
    await page.getByLabel("Task").selectOption("vision");
    await page.getByText("No experiments here yet.").waitFor();
    await page.getByLabel("Task").selectOption("data");
    await table.waitFor();
    expect(await ids()).toEqual(["#1", "#2"]);
    await screenshot(page, "13c-experiments-list");
  });

  it("at 390 px wide the experiment page fits the screen", async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.context().addCookies(await page.context().cookies());
    await phone.goto(`${server.url}/experiments/1`);
    await phone.getByTestId("metrics").waitFor();
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(phone, "14-experiment-phone");
    expect(seriousOrCritical(await axeViolations(phone))).toEqual([]);
    await phone.close();
  });

  describe.skipIf(!haveFixturePython)("image models from the serving fixtures", () => {
    it("vision: the Grad-CAM map is drawn over the image, with an opacity slider", async () => {
      const fx = servingFixtures();
      await publishFixture(server, userId, 9001, fx.modelDir("vision_binary"));
      await page.goto(`${server.url}/experiments/9001/try`);
      await page.getByTestId("image-input").setInputFiles(path.join(fx.dir, "images", "rgb.png"));
      const cam = page.getByTestId("gradcam");
      await cam.waitFor();
      const painted = await cam.evaluate((c) => {
        const canvas = c as HTMLCanvasElement;
        const d = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
        let opaque = 0;
        for (let i = 3; i < d.length; i += 4) if (d[i] > 0) opaque++;
        return { w: canvas.width, h: canvas.height, opaque };
      });
      expect(painted.w).toBeGreaterThan(0);
      expect(painted.opaque).toBeGreaterThan(0);
      expect(await page.getByTestId("prediction").textContent()).toContain("vision_binary-class-0");
      await screenshot(page, "15-try-vision-gradcam");
      expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
      await page.getByTestId("opacity").fill("0.25");
      expect(await cam.evaluate((c) => (c as HTMLElement).style.opacity)).toBe("0.25");
    });

    it("Delete experiment asks first, then the experiment is gone and its model no longer answers", async () => {
      await publishFixture(server, userId, 9003, servingFixtures().modelDir("tabular_binary"));
      await page.goto(`${server.url}/experiments/9003`);
      const button = page.getByTestId("delete-experiment");
      page.once("dialog", (d) => void d.dismiss()); // "Cancel" in the confirm: nothing happens
      await button.click();
      expect(await server.services.experiments.repo.byUserNumber(userId, 9003)).toBeDefined();
      let asked = "";
      page.once("dialog", (d) => ((asked = d.message()), void d.accept()));
      await button.click();
      await page.waitForURL(`${server.url}/experiments`);
      expect(asked).toContain("Delete experiment #9003?");
      for (let i = 0; i < 100 && (await server.services.experiments.repo.byUserNumber(userId, 9003)); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(await server.services.experiments.repo.byUserNumber(userId, 9003)).toBeUndefined();
      expect(await server.services.serving.repo.latest(userId, 9003)).toBeNull();
    });

    it("detection: boxes are drawn on the image, and the score slider hides the weaker ones", async () => {
      const fx = servingFixtures();
      await publishFixture(server, userId, 9002, fx.modelDir("detection"));
      await page.goto(`${server.url}/experiments/9002/try`);
      await page.getByTestId("image-input").setInputFiles(path.join(fx.dir, "images", "rgb.png"));
      const boxes = page.getByTestId("boxes");
      await boxes.waitFor();
      const before = await boxes.locator("rect").count();
      expect(before).toBeGreaterThan(1);
      await screenshot(page, "16-try-detection-boxes");
      expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
      await page.getByTestId("score-slider").fill("0.9");
      const after = await boxes.locator("rect").count();
      expect(after).toBeGreaterThan(0);
      expect(after).toBeLessThan(before);
    });
  });
});
