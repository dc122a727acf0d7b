import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

// Settings → Users in a real Chromium (issue 38 item 4): an administrator invites someone, a second browser (the
// invited person's) opens the one-time link and creates the account, the administrator disables it, and the
// person can no longer sign in. Then a password-reset link, shown once with its expiry.

const ADMIN = { email: "admin@hospital.example", password: "correct horse battery staple" };
const NURSE = { email: "nurse@hospital.example", password: "a long enough nurse password" };

describe.skipIf(!haveChromium)("dashboard: Settings → Users (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let admin: Page;
  let link = "";

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    await server.services.auth.users.create({ ...ADMIN, role: "admin" });
    browser = await launchChromium();
    admin = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("the administrator invites someone and gets the link once, with its expiry", async () => {
    await signInThroughPage(admin, server.url, ADMIN.email, ADMIN.password);
    await admin.getByRole("link", { name: "Users" }).click();
    await admin.getByRole("heading", { name: "Settings → Users" }).waitFor();
    await admin.getByTestId(`user-${ADMIN.email}`).waitFor();
    expect(await admin.getByTestId(`user-${ADMIN.email}`).textContent()).toContain("(you)");
    await admin.getByLabel("Their email (optional)").fill(NURSE.email);
    await admin.getByRole("button", { name: "Create invitation link" }).click();
    const shown = admin.getByTestId("one-time-link");
    await shown.waitFor();
    expect(await shown.textContent()).toMatch(/shown only once.*works until/s);
    link = (await admin.getByTestId("one-time-link-value").textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${server.url}/invite#[A-Za-z0-9_-]{43}$`));
    await admin.getByRole("table", { name: "Pending invitations" }).getByText(NURSE.email).waitFor();
    expect(seriousOrCritical(await axeViolations(admin))).toEqual([]);
    await screenshot(admin, "users-01-invitation-link");
  });

  it("the invited person opens the link in their own browser, creates the account and is signed in; a second use is refused", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const nurse = await context.newPage();
    await nurse.goto(link);
    await nurse.getByRole("heading", { name: "Create your Builder account" }).waitFor();
    expect(await nurse.getByTestId("link-state").textContent()).toMatch(/invited to Builder as a member/);
    expect(await nurse.getByLabel("Email (your sign-in name)").inputValue()).toBe(NURSE.email);
    expect(seriousOrCritical(await axeViolations(nurse))).toEqual([]);
    await nurse.getByLabel("Password (at least 12 characters)").fill(NURSE.password);
    await nurse.getByLabel("Password again").fill(NURSE.password);
    await screenshot(nurse, "users-02-invitation-page");
    await nurse.getByRole("button", { name: "Create my account" }).click();
    await nurse.getByRole("heading", { name: "Experiments" }).waitFor();
    expect(new URL(nurse.url()).pathname).toBe("/experiments");
    expect(await nurse.getByRole("link", { name: "Users" }).count()).toBe(0); // members do not see Settings → Users

    const again = await (await browser.newContext()).newPage();
    await again.goto(link);
    const alert = again.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/already been used/);
    await screenshot(again, "users-03-invitation-used");
    await context.close();
  });

  it("the administrator disables the account; its owner can no longer sign in", async () => {
    await admin.reload();
    const row = admin.getByTestId(`user-${NURSE.email}`);
    await row.waitFor();
    await admin.getByRole("button", { name: `Disable ${NURSE.email}` }).click();
    await admin.getByRole("group", { name: `Confirm disabling ${NURSE.email}` }).waitFor();
    await screenshot(admin, "users-04-confirm-disable");
    await admin.getByRole("button", { name: "Yes, disable" }).click();
    await admin.getByRole("button", { name: `Enable ${NURSE.email}` }).waitFor();
    expect(await row.textContent()).toContain("disabled");
    await screenshot(admin, "users-05-disabled");

    const nurse = await (await browser.newContext()).newPage();
    await nurse.goto(`${server.url}/signin`);
    await nurse.getByLabel("Email").fill(NURSE.email);
    await nurse.getByLabel("Password").fill(NURSE.password);
    await nurse.getByRole("button", { name: "Sign in" }).click();
    const alert = nurse.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/disabled by an administrator/);
    await screenshot(nurse, "users-06-disabled-sign-in");
  });

  it("a password-reset link is shown once with its expiry, and sets a new password", async () => {
    await admin.getByRole("button", { name: `Enable ${NURSE.email}` }).click();
    await admin.getByRole("button", { name: `Disable ${NURSE.email}` }).waitFor();
    await admin.getByRole("button", { name: `Reset password of ${NURSE.email}` }).click();
    const shown = admin.getByTestId("one-time-link");
    await shown.waitFor();
    expect(await shown.textContent()).toContain(`Password-reset link for ${NURSE.email}`);
    const reset = (await admin.getByTestId("one-time-link-value").textContent())!.trim();
    expect(reset).toMatch(/\/reset-password#/);
    await screenshot(admin, "users-07-reset-link");

    const nurseId = (await server.services.auth.users.findByEmail(NURSE.email))!.id;
    const { key } = await server.services.auth.apiKeys.create(nurseId, { scopes: ALL_KEY_SCOPES, name: "pipeline" });
    const nurse = await (await browser.newContext()).newPage();
    await nurse.goto(reset);
    await nurse.getByRole("heading", { name: "Set a new password" }).waitFor();
    // Issue 48 finding 13: the page says the keys outlive a new password, and offers to revoke them (ticked).
    expect(await nurse.getByTestId("reset-api-keys").textContent()).toContain("Working API keys now: 1.");
    expect(await nurse.getByLabel("Also revoke all of this account's API keys", { exact: false }).isChecked()).toBe(true);
    expect(seriousOrCritical(await axeViolations(nurse))).toEqual([]);
    await nurse.getByLabel("New password (at least 12 characters)").fill("a brand new nurse password");
    await nurse.getByLabel("New password again").fill("a brand new nurse password");
    await screenshot(nurse, "users-08-reset-page");
    await nurse.getByRole("button", { name: "Set the new password" }).click();
    await nurse.getByRole("heading", { name: "Experiments" }).waitFor();
    expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(403);

    // On a phone the page still reads (the tables scroll sideways inside their frame).
    await admin.setViewportSize({ width: 390, height: 844 });
    await admin.getByRole("button", { name: "I have passed it on" }).click();
    expect(seriousOrCritical(await axeViolations(admin))).toEqual([]);
    await screenshot(admin, "users-09-phone");
  });
});
