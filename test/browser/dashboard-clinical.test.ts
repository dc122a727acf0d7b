import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { havePima, randomLabelCsv } from "../integration/experiments-fixtures.js";
import { makeZip } from "../helpers/zips.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
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

// Issue 37 on the result page, in a real Chromium against a real Builder and the real Python pipeline: the form
// proposes the positive class; random labels end ready with the amber "not better than chance" badge and the
// verdict box; the confusion matrix is a table, readable at 1280 px and on a 390 px phone.

const EMAIL = "clinician@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium || !havePima)("dashboard: clinical result page (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let tmp: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-clinical-"));
    server = await startTestServer("pglite");
    await server.services.auth.users.create({ email: EMAIL, password: PASSWORD });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("random labels: the form proposes the rarer class, the model ends ready with an amber badge, the verdict and a confusion table", async () => {
    const { csv } = randomLabelCsv();
    const counts = { B: 0, M: 0 };
    for (const line of csv.trim().split("\n").slice(1)) counts[line.split(",")[1] as "B" | "M"]++;
    const rarer = counts.B < counts.M ? "B" : "M";
    const file = path.join(tmp, "random.zip");
    fs.writeFileSync(file, makeZip({ "data.csv": csv }));

    await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    const positive = page.getByTestId("positive-class");
    await positive.waitFor();
    expect(await positive.inputValue()).toBe(rarer);
    expect(await positive.locator("option").allTextContents()).toEqual([
      `B (${counts.B} rows${rarer === "B" ? ", the less frequent" : ""})`,
      `M (${counts.M} rows${rarer === "M" ? ", the less frequent" : ""})`,
    ]);
    await screenshot(page, "37-new-experiment-positive-class");
    await positive.selectOption("M"); // changeable: the clinician names the class of interest
    await page.getByTestId("budget").fill("4");
    await page.getByRole("button", { name: "Build model" }).click();
    const ended = page.locator(
      '[data-testid="experiment"]:is([data-status="ready"], [data-status="failed"], [data-status="invalid_dataset"])',
    );
    await ended.waitFor({ timeout: 150_000 });
    if ((await ended.getAttribute("data-status")) !== "ready") {
      await screenshot(page, "37-result-not-ready");
      throw new Error(`the experiment did not end ready: ${await page.getByRole("alert").first().textContent()}`);
    }

    const badge = page.getByTestId("result-badge");
    await badge.waitFor();
    expect(await badge.textContent()).toBe("ready — not better than chance");
    expect(await badge.getAttribute("data-warning")).toBe("no_better_than_chance");
    // Amber, not the green of a model that passed every check.
    const colour = await badge.evaluate((el) => getComputedStyle(el).color);
    const green = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--ok").trim());
    expect(colour).not.toBe(green);
    const verdict = page.getByTestId("verdict");
    expect(await verdict.getByRole("heading").textContent()).toBe("Verdict: not ready for decisions");
    expect(await verdict.locator('li[data-code="no_better_than_chance"]').textContent()).toMatch(/includes 0\.5, the score of a coin toss/);
    expect(await page.getByTestId("positive-class").textContent()).toMatch(/Positive class: M · chosen in the request/);
    expect(await page.getByTestId("metrics").textContent()).toMatch(/Sensitivity for M[01]\.\d{3} \(/);

    const table = page.getByTestId("confusion-matrix");
    const headers = await table.locator("thead th").allTextContents();
    expect(headers).toEqual(["True class ↓ · predicted →", "B", "M", "Total"]);
    const rows = await table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    expect(rows.map((r) => r[0])).toEqual(["B", "M"]);
    for (const r of rows) {
      const cells = r.slice(1, 3).map((t) => /^(\d+) \((\d+(?:\.\d)?)%\)$/.exec(t ?? "")!);
      expect(cells.every(Boolean)).toBe(true);
      const total = Number(r[3]);
      expect(Number(cells[0][1]) + Number(cells[1][1])).toBe(total);
      expect(Number(cells[0][2]) + Number(cells[1][2])).toBeCloseTo(100, 0);
    }
    // Readable at 1280 px: the table is not squeezed (no cell narrower than its text).
    const fits = await table.evaluate((t) => [...t.querySelectorAll("td")].every((td) => td.scrollWidth <= td.clientWidth + 1));
    expect(fits).toBe(true);
    await screenshot(page, "37-result-not-better-than-chance-1280");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);

    // A phone: 390 px wide. The table fits the screen or scrolls inside its own box, never the page.
    await page.setViewportSize({ width: 390, height: 844 });
    const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(pageWidth).toBeLessThanOrEqual(390);
    const box = await table.boundingBox();
    expect(box!.width).toBeGreaterThan(200);
    await screenshot(page, "37-result-not-better-than-chance-390");
    // What a phone shows at once, at the verdict and at the confusion matrix (the full page is too tall to judge).
    await verdict.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "37-phone-verdict.png") });
    await table.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, "37-phone-confusion.png") });
    await page.setViewportSize({ width: 1280, height: 800 });
  }, 240_000);

  it("WDBC: M proposed as positive, its sensitivity and specificity named, the confusion table, and what the verdict says", async () => {
    const wdbc = new URL("../../../shared/datasets/wdbc/data.csv", import.meta.url);
    if (!fs.existsSync(wdbc)) return;
    const file = path.join(tmp, "wdbc.zip");
    fs.writeFileSync(file, makeZip({ "data.csv": fs.readFileSync(wdbc, "utf8") }));
    await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    const positive = page.getByTestId("positive-class");
    await positive.waitFor();
    expect(await positive.inputValue()).toBe("M"); // 212 malignant of 569: the less frequent
    await page.getByTestId("budget").fill("4");
    await page.getByRole("button", { name: "Build model" }).click();
    await page.locator('[data-testid="experiment"][data-status="ready"]').waitFor({ timeout: 150_000 });
    await page.getByTestId("verdict").waitFor();
    await screenshot(page, "37-result-wdbc-1280");
    expect(await page.getByTestId("metrics").textContent()).toMatch(
      /Sensitivity for M[01]\.\d{3} \([01]\.\d{3}–[01]\.\d{3}\)Specificity for M/,
    );
    expect(await page.getByTestId("confusion-matrix").locator("tbody th").allTextContents()).toEqual(["B", "M"]);
  }, 240_000);
});
