import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, plantedSites, waitForStatus } from "../integration/experiments-fixtures.js";
import {
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// Issue 37 item 5 on the result page, in a real Chromium against a real Builder and the real Python pipeline: the
// Subgroups section (a table per column, intervals, the flag in words) at 1280 px and on a 390 px phone, where each
// group becomes a card and nothing scrolls sideways. Needs nothing from ../shared (a generated table, a planted worse site).

describe.skipIf(!haveChromium)("dashboard: subgroups on the result page (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    const user = await createUserWithKey(server, { email: "subgroups@hospital.example", password: "a long enough password" });
    const zipPath = `${user.userId}/sites/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": plantedSites() })));
    const client = api(server.url, user.key);
    const body = dataRequest(user.userId, 1, zipPath, ["f1", "f2"], { subgroup_cols: ["site", "age"], positive_class: "M" });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    expect((await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 150_000)).status).toBe("ready");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signInThroughPage(page, server.url, user.email, "a long enough password");
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("shows a table per subgroup column with intervals and the planted site flagged in words, at 1280 px and on a phone", async () => {
    await page.goto(`${server.url}/experiments/1`);
    const section = page.getByTestId("subgroups");
    await section.waitFor({ timeout: 30_000 });
    expect(await section.getByRole("heading").first().textContent()).toBe("Subgroups");
    const tables = section.getByTestId("subgroup-table");
    expect(await tables.evaluateAll((ts) => ts.map((t) => t.getAttribute("data-column")))).toEqual(["site", "age"]);
    const site = tables.first();
    expect(await site.locator("tbody th").allTextContents()).toEqual(["A", "B", "C"]);
    const c = site.locator('tbody tr[data-flag="worse"]');
    expect(await c.locator("th").textContent()).toBe("C");
    expect(await c.textContent()).toMatch(/Clearly worse than the rest \(others: AUC [01]\.\d\d\)/);
    expect(await site.locator("tbody tr").first().locator('td[data-label="AUC"]').textContent()).toMatch(
      /^[01]\.\d\d \([01]\.\d\d–[01]\.\d\d\)$/,
    );
    expect(await tables.nth(1).locator("tbody tr").count()).toBe(4);
    expect(await page.getByTestId("verdict").locator('li[data-code="subgroup_worse"]').textContent()).toMatch(/site C/);
    // Readable at 1280 px: no cell narrower than its text.
    const fits = await site.evaluate((t) => [...t.querySelectorAll("td")].every((td) => td.scrollWidth <= td.clientWidth + 1));
    expect(fits).toBe(true);
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, "37-subgroups-1280");
    await section.screenshot({ path: (await screenshot(page, "37-subgroups-1280")).replace(/\.png$/, "-section.png") });
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);

    // A phone: each group is a card, the page never scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const box = await site.boundingBox();
    expect(box!.width).toBeLessThanOrEqual(390);
    expect(await site.locator("thead").evaluate((el) => el.getBoundingClientRect().height)).toBeLessThanOrEqual(1);
    await section.screenshot({ path: (await screenshot(page, "37-subgroups-390")).replace(/\.png$/, "-section.png") });
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });

    // The model card (report.html) carries the same tables, the flag in words.
    await page.goto(`${server.url}/v1/experiments/1/report.html`);
    const heading = page.getByRole("heading", { name: "6b. Performance by subgroup" });
    await heading.waitFor();
    expect(await page.locator("table caption", { hasText: "site" }).count()).toBe(1);
    expect(await page.locator("body").textContent()).toContain("clearly worse than the rest");
    await heading.scrollIntoViewIfNeeded();
    await page.screenshot({ path: (await screenshot(page, "37-subgroups-model-card")).replace(/\.png$/, "-view.png") });
  }, 120_000);

  it("the new-experiment form offers subgroup columns, and the ticked one comes back on the result page", async () => {
    const file = path.join(os.tmpdir(), `builder-subgroups-${process.pid}.zip`);
    fs.writeFileSync(file, makeZip({ "data.csv": plantedSites() }));
    try {
      await page.goto(`${server.url}/experiments`);
      await page.getByRole("link", { name: "New experiment", exact: true }).first().click();
      await page.getByTestId("zip-input").setInputFiles(file);
      await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
      const picker = page.getByTestId("subgroups-picker");
      await picker.locator("summary").click();
      const boxes = picker.getByTestId("subgroup-cols");
      const offered = (await boxes.locator("label").allTextContents()).map((t) => t.split(" ")[0]);
      expect(offered).toEqual(expect.arrayContaining(["site", "age"])); // the label column is not offered
      expect(offered).not.toContain("diagnosis");
      await boxes.getByLabel(/^site /).check();
      await screenshot(page, "37-subgroups-new-experiment");
      await page.getByTestId("budget").fill("4");
      await page.getByRole("button", { name: "Build model" }).click();
      await page.locator('[data-testid="experiment"][data-status="ready"]').waitFor({ timeout: 150_000 });
      const tables = page.getByTestId("subgroups").getByTestId("subgroup-table");
      expect(await tables.evaluateAll((ts) => ts.map((t) => t.getAttribute("data-column")))).toEqual(["site"]);
    } finally {
      fs.rmSync(file, { force: true });
    }
  }, 200_000);
});
