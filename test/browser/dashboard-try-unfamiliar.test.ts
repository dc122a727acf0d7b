import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experiments } from "../../src/db/schema.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot, signInThroughPage } from "./browser.js";

// Issue 49 item 5 in Try it: an input the model finds unfamiliar (x-input-check) gets a visible warning above the
// answer, in the dashboard's language; an ordinary one does not. The model is the serving fixture tabular_binary
// with the check a build would write (age 18-95, bmi 14-60: a row is unfamiliar beyond half a spread outside).

const EMAIL = "try-unfamiliar@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium || !haveFixturePython)("dashboard: Try it warns of an unfamiliar input (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    const userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "try-unfamiliar-"));
    const source = servingFixtures().modelDir("tabular_binary");
    fs.copyFileSync(path.join(source, "model.onnx"), path.join(dir, "model.onnx"));
    const m = JSON.parse(fs.readFileSync(path.join(source, "manifest.json"), "utf8"));
    m.input_check = {
      mode: "flag",
      table: {
        threshold: 0.5,
        columns: [
          { name: "age", low: 18, high: 95, scale: 60 },
          { name: "bmi", low: 14, high: 60, scale: 30 },
        ],
      },
    };
    fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(m));
    await publishFixture(server, userId, 32, dir);
    // The model page shows a ready experiment's results (and its settings) only beside its metrics: the build's.
    await server.services.db.update(experiments).set({ metrics: m.metrics.test }).where(eq(experiments.experimentId, 32));
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  const score = async (page: Page, age: string) => {
    await page.getByRole("spinbutton", { name: /^age\b/ }).fill(age);
    for (const [name, v] of [
      ["sex", "1"],
      ["bmi", "31.5"],
      ["site", "2"],
    ])
      await page.getByRole("spinbutton", { name: new RegExp(`^${name}\\b`) }).fill(v);
    await page.getByRole("button", { name: /^(Predict|Predecir)$/ }).click();
    await page.getByTestId("prediction").waitFor();
  };

  it("age 500 is scored with a warning, in English and then in Spanish; age 67 has none", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
    for (const [language, words, fieldWords] of [
      ["en", "This row's values lie far outside the data this model was trained on", "outside the training range (18 – 95)"],
      [
        "es",
        "Los valores de esta fila quedan muy lejos de los datos con los que se entrenó este modelo",
        "fuera del rango de entrenamiento (18 – 95)",
      ],
    ]) {
      if (language === "es") {
        await page.getByRole("link", { name: "Account" }).click();
        await page.getByTestId("language").selectOption("es");
        await page.getByRole("heading", { name: "Ajustes → Cuenta" }).waitFor();
      }
      await page.goto(`${server.url}/experiments/32/try`);
      await page.getByRole("spinbutton", { name: /^age\b/ }).waitFor();
      await score(page, "500");
      const note = page.getByTestId("input-check-note");
      await note.waitFor();
      expect(await note.textContent()).toContain(words);
      // The field's own warning is the dashboard's too, not a sentence fixed in English (it once was).
      const field = (await page.getByTestId("range-warning-0").textContent()) ?? "";
      expect(field).toContain(fieldWords);
      if (language === "es") {
        expect(field).not.toMatch(/outside|training|range|learned/i);
        expect(await page.getByTestId("range-note").textContent()).not.toMatch(/outside|training|learned/i);
      }
      await screenshot(page, `45-try-unfamiliar-${language}`);
      await score(page, "67");
      expect(await page.getByTestId("input-check-note").count()).toBe(0);
    }
    await page.close();
  });

  it("the model page switches the check to refuse and back: the API reports each, and Try it is answered with a 422 while refusing", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
    const mode = async () => (await (await page.request.get(`${server.url}/v1/models/32/input-check`)).json()).mode;
    expect(await mode()).toBe("flag");
    await page.goto(`${server.url}/experiments/32`);
    const panel = page.getByTestId("input-check");
    await panel.waitFor();
    expect(await panel.textContent()).toContain("422");
    for (const [to, label] of [
      ["refuse", "Refuse"],
      ["flag", "Flag"],
    ]) {
      await panel.getByRole("radio", { name: new RegExp(`^${label}`) }).check();
      await panel.getByTestId("input-check-save").click();
      await panel.getByTestId("input-check-saved").waitFor();
      expect(await mode()).toBe(to);
      // A new model version: the history names it for what it was, not as a rollback.
      await page
        .getByText(/unfamiliar-input setting changed: model version \d+/)
        .first()
        .waitFor();
      expect(await panel.getByTestId("input-check-save").isDisabled()).toBe(true); // saved: nothing left to save
      if (to === "refuse") {
        await screenshot(page, "46-model-input-check-refuse");
        await page.goto(`${server.url}/experiments/32/try`);
        await page.getByRole("spinbutton", { name: /^age\b/ }).waitFor();
        await page.getByRole("spinbutton", { name: /^age\b/ }).fill("500");
        for (const [name, v] of [
          ["sex", "1"],
          ["bmi", "31.5"],
          ["site", "2"],
        ])
          await page.getByRole("spinbutton", { name: new RegExp(`^${name}\\b`) }).fill(v);
        await page.getByRole("button", { name: "Predict" }).click();
        await page.getByRole("alert").filter({ hasText: "Prediction failed" }).waitFor();
        await page.goto(`${server.url}/experiments/32`);
        await panel.waitFor();
      }
    }
    // The card in Spanish: no English left in it.
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByTestId("language").selectOption("es");
    await page.getByRole("heading", { name: "Ajustes → Cuenta" }).waitFor();
    await page.goto(`${server.url}/experiments/32`);
    await panel.getByRole("radio", { name: /^Rechazar/ }).waitFor();
    const es = (await panel.textContent()) ?? "";
    expect(es).toContain("Entradas desconocidas");
    expect(es).toContain("error 422");
    expect(es).not.toMatch(/\b(Flag|Refuse|Save|unfamiliar inputs|answer|caller)\b/);
    await page.close();
  });
});
