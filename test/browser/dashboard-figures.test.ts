import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeZip } from "../helpers/zips.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { api, visionRequest, waitForStatus } from "../integration/experiments-fixtures.js";
import {
  SCREENSHOTS,
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// Issue 37 items 6 and 7 in a real Chromium against a real Builder and the real Python pipeline, on WDBC: the
// result page shows the decision curve and the calibration plot, every figure's axis text displays at 12 px or
// more at 1280 px (measured from the SVG's own font sizes and the width the page gives the image), a click or the
// keyboard opens a figure large in a dialog, and each figure's numbers sit in a <details> table. Then a tiny image
// model: its figures (line charts, confusion matrix) measured the same way, and Try it's Grad-CAM colour legend.

const EMAIL = "reader@hospital.example";
const PASSWORD = "a long enough password";
const WDBC = new URL("../../../shared/datasets/wdbc/data.csv", import.meta.url);

/** The smallest font size of any <text> in the SVG, in CSS px as displayed: its own or inherited size x scale. */
async function smallestDisplayedFont(page: Page, name: string): Promise<{ smallest: number; scale: number; texts: number }> {
  return page
    .getByTestId(`figure-${name}`)
    .locator("img")
    .first()
    .evaluate(async (img: HTMLImageElement) => {
      const svgText = await (await fetch(img.src)).text();
      const svg = new DOMParser().parseFromString(svgText, "image/svg+xml").documentElement;
      const viewBoxWidth = Number((svg.getAttribute("viewBox") ?? "").split(/\s+/)[2] ?? svg.getAttribute("width"));
      const scale = img.getBoundingClientRect().width / viewBoxWidth;
      const sizeOf = (el: Element | null): number => {
        for (let e = el; e; e = e.parentElement) {
          const v = e.getAttribute("font-size");
          if (v) return Number.parseFloat(v);
        }
        return 16; // the SVG default
      };
      const sizes = [...svg.querySelectorAll("text")].map((t) => sizeOf(t));
      return { smallest: Math.min(...sizes) * scale, scale, texts: sizes.length };
    });
}

describe.skipIf(!haveChromium || !fs.existsSync(WDBC))("dashboard: readable figures, decision curve and calibration (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let tmp: string;
  let user: UserWithKey;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-figures-"));
    server = await startTestServer("pglite");
    user = await createUserWithKey(server, { email: EMAIL, password: PASSWORD });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("WDBC: 12 px axis text as displayed, the enlarge dialog by click and keyboard, data tables, decision curve and calibration slope", async () => {
    const file = path.join(tmp, "wdbc.zip");
    fs.writeFileSync(file, makeZip({ "data.csv": fs.readFileSync(WDBC, "utf8") }));
    await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    await page.getByTestId("positive-class").selectOption("M");
    await page.getByTestId("budget").fill("4");
    await page.getByRole("button", { name: "Build model" }).click();
    await page.locator('[data-testid="experiment"][data-status="ready"]').waitFor({ timeout: 150_000 });
    const figures = page.getByTestId("figures");
    await figures.locator("figure").first().waitFor();

    const names = await figures
      .locator("figure")
      .evaluateAll((fs) => fs.map((f) => f.getAttribute("data-testid")!.replace(/^figure-/, "")));
    expect(names).toEqual(expect.arrayContaining(["roc", "pr", "calibration", "decision_curve", "importance"]));
    // WDBC's test scores often separate the classes perfectly: the slope is then undefined and the row says why.
    expect(await page.getByTestId("metrics").textContent()).toMatch(
      /Calibration slope \(1 is ideal[^)]*\)(-?\d+\.\d{3} \(| — undefined: the scores separate the test classes perfectly–)/,
    );
    expect(await page.getByTestId("metrics").textContent()).toMatch(/Calibration intercept \(0 is ideal[^)]*\)-?\d+\.\d{3}/);

    // Every figure's smallest text, as displayed at 1280 px, is at least 12 px.
    for (const name of names) {
      await page.getByTestId(`figure-${name}`).locator("img").first().scrollIntoViewIfNeeded();
      const measured = await smallestDisplayedFont(page, name);
      expect(measured.texts, name).toBeGreaterThan(3);
      console.info(`figure ${name}: smallest text ${measured.smallest.toFixed(1)} px as displayed (scale ${measured.scale.toFixed(2)})`);
      expect(
        measured.smallest,
        `${name}: smallest text ${measured.smallest.toFixed(1)} px at scale ${measured.scale.toFixed(2)}`,
      ).toBeGreaterThanOrEqual(12);
    }

    // The decision curve: a click opens it large in a modal dialog; Escape closes it.
    const card = page.getByTestId("figure-decision_curve");
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, "37-figures-wdbc-1280");
    const small = (await card.locator("button.figure-open img").boundingBox())!;
    await card.getByRole("button", { name: /^Enlarge: Decision curve/ }).click();
    const dialog = card.getByTestId("figure-dialog");
    await dialog.waitFor({ state: "visible" });
    expect(await dialog.evaluate((d: HTMLDialogElement) => d.open && d.matches(":modal"))).toBe(true);
    const large = (await dialog.locator("img").boundingBox())!;
    expect(large.width).toBeGreaterThan(small.width * 1.4);
    await page.screenshot({ path: path.join(SCREENSHOTS, "37-figure-dialog-decision-curve.png") });
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    // The keyboard alone: focus the calibration figure's button, Enter opens, the Close button closes.
    const calibration = page.getByTestId("figure-calibration");
    await calibration.locator("button.figure-open").focus();
    await page.keyboard.press("Enter");
    const calDialog = calibration.getByTestId("figure-dialog");
    await calDialog.waitFor({ state: "visible" });
    await calDialog.getByRole("button", { name: "Close" }).click();
    await calDialog.waitFor({ state: "hidden" });

    // The decision curve's numbers: the <details> table matches report.json's decision curve at 0.05, 0.10, ...
    await card.locator("details summary").click();
    const table = card.locator("details table");
    expect(await table.locator("thead th").allTextContents()).toEqual([
      "threshold probability",
      "net benefit: model",
      "net benefit: treat all",
      "net benefit: treat none",
    ]);
    const rows = await table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => Number(c.textContent))));
    expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 19 }, (_, i) => Math.round((i + 1) * 5) / 100));
    const id = Number(page.url().split("/").pop());
    const report = await page.evaluate(
      async (n) =>
        (await (await fetch(`/v1/experiments/${n}/report`)).json()) as {
          report: {
            test: { decision_curve: { thresholds: number[]; model: number[]; treat_all: number[] }; confusion_matrix: number[][] };
          };
        },
      id,
    );
    const curve = report.report.test.decision_curve;
    const at = curve.thresholds.indexOf(0.1);
    expect(rows[1][1]).toBeCloseTo(curve.model[at], 3);
    expect(rows[1][2]).toBeCloseTo(curve.treat_all[at], 3);
    // Calibration: one row per non-empty bin with its count; the counts add up to the test rows.
    await calibration.locator("details summary").click();
    const calRows = await calibration.locator("details tbody tr").evaluateAll((trs) => trs.map((tr) => Number(tr.children[2].textContent)));
    const testRows = report.report.test.confusion_matrix.flat().reduce((a, b) => a + b, 0);
    expect(calRows.reduce((a, b) => a + b, 0)).toBe(testRows);
    expect(calRows.every((n) => n > 0)).toBe(true);
    await calibration.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "37-figures-tables-open.png") });
  }, 300_000);

  it("an image model: its figures' text at 12 px or more, and Try it's Grad-CAM overlay has a colour legend", async () => {
    // 60 tiny images: class 1 has a bright square in the middle (as test/integration/experiments-vision.test.ts).
    const files: Record<string, Buffer | string> = {};
    const rows = ["patient,label,image"];
    for (let i = 0; i < 60; i++) {
      const label = i % 2;
      const px = Buffer.alloc(24 * 24);
      for (let j = 0; j < px.length; j++)
        px[j] = ((j * 37 + i * 11) % 40) + (label && j % 24 > 6 && j % 24 < 18 && j / 24 > 6 && j / 24 < 18 ? 180 : 0);
      files[`images/${i}.png`] = await sharp(px, { raw: { width: 24, height: 24, channels: 1 } })
        .png()
        .toBuffer();
      rows.push(`p${i},${label},images/${i}.png`);
    }
    files["labels.csv"] = rows.join("\n") + "\n";
    const zipPath = `${user.userId}/vision/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip(files)));
    const client = api(server.url, user.key);
    const post = await client.post("/v1/experiments", visionRequest(user.userId, 2, zipPath, { time_budget_s: 5 }));
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 200_000);
    expect(done.status).toBe("ready");

    await page.goto(`${server.url}/experiments/2`);
    const figures = page.getByTestId("figures");
    await figures.locator("figure").first().waitFor();
    const names = await figures
      .locator("figure")
      .evaluateAll((fs) => fs.map((f) => f.getAttribute("data-testid")!.replace(/^figure-/, "")));
    expect(names).toEqual(expect.arrayContaining(["roc", "calibration", "confusion", "decision_curve", "training_loss"]));
    for (const name of names) {
      const measured = await smallestDisplayedFont(page, name);
      expect(measured.smallest, `${name}: smallest text ${measured.smallest.toFixed(1)} px`).toBeGreaterThanOrEqual(12);
    }
    await page.getByTestId("figure-confusion").scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "37-figures-image-model-1280.png") });
    await page.getByTestId("figure-confusion").locator("details summary").click();
    expect(await page.getByTestId("figure-confusion").locator("details thead th").allTextContents()).toEqual([
      "true \\ predicted",
      "0",
      "1",
    ]);

    await page.goto(`${server.url}/experiments/2/try`);
    const input = page.getByTestId("image-input");
    await input.waitFor();
    const sample = path.join(tmp, "square.png");
    fs.writeFileSync(sample, files["images/1.png"] as Buffer);
    await input.setInputFiles(sample);
    await page.getByTestId("overlay").waitFor({ timeout: 30_000 });
    const legend = page.getByTestId("gradcam-legend");
    await legend.waitFor({ timeout: 10_000 });
    expect(await legend.textContent()).toBe("Less influenceMore influence on the prediction");
    // The legend's ramp is the canvas's ramp: dark purple through red and orange to pale yellow.
    const ramp = await legend.locator(".ramp").evaluate((el) => getComputedStyle(el).backgroundImage);
    expect(ramp).toMatch(/^linear-gradient\(to right, rgb\(0, 0, 4\) 0%.*rgb\(252, 255, 164\) 100%\)$/);
    await screenshot(page, "37-try-gradcam-legend");
  }, 300_000);
});
