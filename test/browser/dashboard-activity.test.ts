import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey } from "../helpers/auth.js";
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

// Settings → Activity: the user's own audit log in words, in a real Chromium against a real Builder (issue 38 item 2:
// "readable by the user: GET /v1/audit, a dashboard page, CSV export").

describe.skipIf(!haveChromium)("dashboard: the activity (audit log) page (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("lists the user's own sign-in and key changes in words, newest first, and downloads the whole log as CSV", async () => {
    const user = await createUserWithKey(server);
    const other = await createUserWithKey(server);
    // The other user signs in too: their entry must not reach this user's page.
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: other.email, password: other.password }),
    });
    expect(signIn.status).toBe(200);

    await signInThroughPage(page, server.url, user.email, user.password);
    await page.getByRole("link", { name: "Settings → API" }).click();
    await page.getByLabel("Name").fill("radiology-notebook");
    await page.getByRole("button", { name: "Generate new key" }).click();
    await page.getByTestId("new-key").waitFor();
    await page.getByRole("button", { name: "I have stored it" }).click();
    await page.getByRole("button", { name: "Revoke radiology-notebook" }).click();
    await page.getByRole("button", { name: "Yes, revoke" }).click();
    await page.getByRole("button", { name: "Revoke radiology-notebook" }).waitFor({ state: "detached" }); // revoked keys are hidden

    await page.getByRole("link", { name: "Activity" }).click();
    await page.getByRole("heading", { name: "Activity" }).waitFor();
    const table = page.getByTestId("audit");
    await table.waitFor();
    const rows = await table.locator("tbody tr").allTextContents();
    expect(rows).toHaveLength(3); // the other user's sign-in is not listed
    expect(rows[0]).toContain("Revoked an API key");
    expect(rows[1]).toContain("Created an API key");
    expect(rows[2]).toContain("Signed in to the dashboard");
    for (const r of rows) expect(r).toContain("Dashboard");
    expect(rows.join("\n")).not.toContain("sign_in"); // codes are shown in words
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "activity-01-audit-log");

    const href = await page.getByTestId("audit-csv").getAttribute("href");
    const csv = await page.evaluate(async (url) => (await fetch(url!)).text(), href);
    const lines = csv.trim().split("\r\n");
    expect(lines[0]).toBe("seq,at,action,via,target,details");
    expect(lines.slice(1).map((l) => l.split(",")[2])).toEqual(["sign_in", "api_key_created", "api_key_revoked"]);
  });
});
