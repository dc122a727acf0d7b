import { Readable } from "node:stream";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, diagnosisRows, waitForStatus, type Api } from "../integration/experiments-fixtures.js";
import {
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// Issue 37 item 3 in a real Chromium: the result page of a binary table model has an "Operating point" panel. The
// slider and the presets move sensitivity, specificity, PPV and NPV live (validation data, computed in the
// browser); Save publishes version 2 with its test figures; Make current on version 1 rolls back. Screenshots:
// .test-results/screenshots/37-operating-point*.png (looked at by a person).

const EMAIL = "cardiologist@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium)("dashboard: operating point (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let client: Api;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    const user = await createUserWithKey(server, { email: EMAIL, password: PASSWORD });
    const rows = diagnosisRows(300, 23, { name: "noise", value: (_i, rand) => rand().toFixed(3) });
    const zipPath = `${user.userId}/op/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(makeZip({ "data.csv": rows.join("\n") + "\n" })));
    client = api(server.url, user.key);
    const body = dataRequest(user.userId, 1, zipPath, ["f1", "f2", "noise"], { positive_class: "M", name: "Malignancy, synthetic" });
    expect((await client.post("/v1/experiments", body)).status).toBe(202);
    expect((await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 200_000)).status).toBe("ready");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("presets and the slider move the validation figures; Save makes version 2; Make current restores version 1", async () => {
    const errors: string[] = [];
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    await page.goto(`${server.url}/experiments/1`);
    const panel = page.getByTestId("operating-point");
    await panel.getByTestId("op-range").waitFor();
    const figures = panel.getByTestId("op-figures");
    expect(await figures.textContent()).toContain("of 100 patients with M");

    // Preset: sensitivity >= 0.95 (the default target).
    await panel.getByRole("button", { name: "Sensitivity ≥" }).click();
    const sens = Number(/of 100 patients with M, (\d+) are flagged/.exec((await figures.textContent()) ?? "")?.[1]);
    expect(sens).toBeGreaterThanOrEqual(95);
    const threshold = await panel.getByTestId("op-threshold").textContent();
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, "37-operating-point-preset");

    // The slider is live: one step to the right (a higher threshold) flags fewer patients.
    const flaggedText = async () => Number(/(\d+) of \d+ validation patients/.exec((await figures.textContent()) ?? "")?.[1]);
    const before = await flaggedText();
    await panel.getByTestId("op-range").focus();
    await page.keyboard.press("ArrowRight");
    expect(await flaggedText()).toBeLessThan(before);
    await page.keyboard.press("ArrowLeft");
    expect(await panel.getByTestId("op-threshold").textContent()).toBe(threshold);
    // Back on the preset's point, but now "set by hand": re-apply the preset so Save sends the rule.
    await panel.getByRole("button", { name: "Sensitivity ≥" }).click();

    await panel.getByTestId("op-save").click();
    const saved = panel.getByTestId("op-saved");
    await saved.waitFor();
    expect(await saved.textContent()).toContain("Saved as version 2");
    const versions = panel.getByTestId("op-versions");
    await versions.getByRole("row", { name: /^2 / }).getByText("current").waitFor();
    expect(await versions.getByRole("row", { name: /^2 / }).textContent()).toContain("sensitivity ≥ 0.95");
    await saved.scrollIntoViewIfNeeded();
    await screenshot(page, "37-operating-point-saved");
    const v2 = (await client.get("/v1/models/1")).body;
    expect(v2.version).toBe(2);
    // The history says so.
    await page.getByText("operating point saved as model version 2").waitFor();

    const a11y = seriousOrCritical(await axeViolations(page));
    expect(a11y, JSON.stringify(a11y)).toEqual([]);

    await versions.getByRole("row", { name: /^1 / }).getByRole("button", { name: "Make current" }).click();
    await versions.getByRole("row", { name: /^1 / }).getByText("current").waitFor();
    expect((await client.get("/v1/models/1")).body.version).toBe(1);
    await page.getByText("model version 1 made current again").waitFor();
    // The slider is back at version 1's threshold, and Save would publish that point (not the earlier preset).
    expect(Number(await panel.getByTestId("op-threshold").textContent())).toBeCloseTo(
      (await client.get("/v1/models/1/operating-point")).body.current.threshold,
      2,
    );
    expect(await panel.getByText("(set by hand)").count()).toBe(1);
    await versions.scrollIntoViewIfNeeded();
    await screenshot(page, "37-operating-point-rollback");

    // A phone: 390 px wide. The panel fits; the versions table scrolls inside its own box, never the page.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, "37-operating-point-390");
    expect(errors).toEqual([]);
  });
});
