import type { Browser, BrowserContext, Page, Request } from "playwright-core";
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

// The workspace switcher and Settings → Members in a real Chromium (issue 50 item 5): Ana (English, 1280 px) makes a
// workspace from the switcher, adds Ben (who has an account) and invites Dora (who has none: the link is shown);
// Dora opens the link and lands in the workspace; Ben (Spanish, a 390 px phone) switches to it and sees the members;
// Ana makes Ben an editor, then removes him: his key of that workspace is refused and his next page load falls back
// to his personal workspace.

const ANA = { email: "ana@hospital.example", password: "ana's long enough password" };
const BEN = { email: "ben@hospital.example", password: "ben's long enough password" };
const DORA = { email: "dora@hospital.example", password: "dora's long enough password" };

/** Signs in through the API with the context's own cookie jar (the sign-in page's labels are the language's). */
async function signInByApi(context: BrowserContext, baseUrl: string, who: { email: string; password: string }) {
  const r = await context.request.post(`${baseUrl}/v1/session`, { data: who });
  expect(r.status()).toBe(200);
}

describe.skipIf(!haveChromium)("dashboard: workspace switcher and Settings → Members (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let ana: Page;
  let benContext: BrowserContext;
  let ben: Page;
  let ws = "";
  let benKey = "";

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    await server.services.auth.users.create(ANA);
    await server.services.auth.users.create(BEN);
    browser = await launchChromium();
    ana = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" });
    benContext = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "es-ES", isMobile: true, hasTouch: true });
    ben = await benContext.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("Ana makes a workspace from the switcher; every request then carries X-Builder-Workspace", async () => {
    await signInThroughPage(ana, server.url, ANA.email, ANA.password);
    const switcher = ana.getByTestId("workspace-switcher");
    expect(await switcher.locator("option:checked").textContent()).toBe("Personal · Owner");
    await switcher.selectOption("new");
    await ana.getByRole("heading", { name: "Settings → Members" }).waitFor();
    await ana.getByPlaceholder("e.g. Cardiology research").fill("Cardiology");
    await ana.getByRole("button", { name: "Create and switch to it" }).click();
    await ana.getByRole("heading", { name: "Members of Cardiology" }).waitFor();
    expect(await switcher.locator("option:checked").textContent()).toBe("Cardiology · Owner");
    ws = (await ana.evaluate(() => localStorage.getItem("builder.workspace")))!;
    expect(ws).toMatch(/^[0-9a-f-]{36}$/);
    const sent: Request[] = [];
    ana.on("request", (r) => void (r.url().includes("/v1/experiments") && sent.push(r)));
    await ana.getByRole("link", { name: "Experiments", exact: true }).click();
    await ana.getByRole("heading", { name: "Experiments" }).waitFor();
    await expect.poll(() => sent.length).toBeGreaterThan(0);
    expect(sent.map((r) => r.headers()["x-builder-workspace"])).toEqual(sent.map(() => ws));
  });

  it("Ana adds Ben at once and invites Dora, whose link is shown; the roles are explained one sentence each", async () => {
    await ana.getByRole("link", { name: "Members" }).click();
    await ana.getByRole("heading", { name: "Members of Cardiology" }).waitFor();
    const roles = await ana.getByTestId("roles").locator("dd").allTextContents();
    expect(roles).toHaveLength(4);
    for (const sentence of roles) expect(sentence).toMatch(/^[A-Z][^.]+\.$/);
    await ana.getByLabel("Their e-mail").fill(BEN.email);
    await ana.getByRole("form", { name: "Add a member" }).getByRole("combobox").selectOption("viewer");
    await ana.getByRole("button", { name: "Add", exact: true }).click();
    await ana.getByText(`${BEN.email} is now a member (Viewer).`).waitFor();
    await ana.getByLabel("Their e-mail").fill(DORA.email);
    await ana.getByRole("form", { name: "Add a member" }).getByRole("combobox").selectOption("editor");
    await ana.getByRole("button", { name: "Add", exact: true }).click();
    const invitation = ana.getByTestId("workspace-invitation");
    await invitation.waitFor();
    expect(await invitation.textContent()).toContain(`Invitation for ${DORA.email} to join Cardiology as Editor`);
    const link = (await ana.getByTestId("workspace-invitation-link").textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${server.url}/invite#[A-Za-z0-9_-]{43}$`));
    const rows = await ana.getByTestId("members").locator("tbody tr").allTextContents();
    expect(rows).toHaveLength(2);
    expect(seriousOrCritical(await axeViolations(ana))).toEqual([]);
    await screenshot(ana, "members-01-en-1280-invitation");

    const dora = await (await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US" })).newPage();
    await dora.goto(link);
    await dora.getByLabel("Password (at least 12 characters)").fill(DORA.password);
    await dora.getByLabel("Password again").fill(DORA.password);
    await dora.getByRole("button", { name: "Create my account" }).click();
    await dora.getByRole("heading", { name: "Experiments" }).waitFor();
    const options = await dora.getByTestId("workspace-switcher").locator("option").allTextContents();
    expect(options.slice(0, 2)).toEqual(["Personal · Owner", "Cardiology · Editor"]);
  });

  it("Ben, in Spanish on a phone, switches to the workspace and sees its members; Ana makes him an editor", async () => {
    benKey = (
      await server.services.auth.apiKeys.create((await server.services.auth.users.findByEmail(BEN.email))!.id, {
        workspaceId: ws,
        scopes: ["read"],
      })
    ).key;
    await signInByApi(benContext, server.url, BEN);
    await ben.goto(`${server.url}/settings/members`);
    await ben.getByRole("heading", { name: "Ajustes → Miembros" }).waitFor();
    const switcher = ben.getByTestId("workspace-switcher");
    expect(await switcher.locator("option:checked").textContent()).toBe("Personal · Propietario");
    await switcher.selectOption({ label: "Cardiology · Lector" });
    await ben.getByRole("heading", { name: "Miembros de Cardiology" }).waitFor();
    expect(await ben.getByRole("button", { name: "Añadir", exact: true }).count()).toBe(0); // a viewer adds no one
    expect(await ben.getByRole("button", { name: "Salir" }).count()).toBe(1);
    expect(await ben.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(seriousOrCritical(await axeViolations(ben))).toEqual([]);
    await screenshot(ben, "members-02-es-390-viewer");

    await ana.getByLabel(`Role of ${BEN.email}`).selectOption("editor");
    await expect.poll(async () => ana.getByLabel(`Role of ${BEN.email}`).inputValue()).toBe("editor");
    await ben.reload();
    await ben.getByRole("heading", { name: "Miembros de Cardiology" }).waitFor();
    expect(await switcher.locator("option:checked").textContent()).toBe("Cardiology · Editor");
  });

  it("Ana removes Ben: his key of the workspace is refused at once and his next page load is back in his personal workspace", async () => {
    expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${benKey}` } })).status).toBe(200);
    await ana.getByRole("button", { name: "Remove" }).first().click();
    await ana.getByRole("button", { name: "Yes, remove" }).click();
    await ana.getByText(`${BEN.email} was removed; 1 API key of theirs stopped working.`).waitFor();
    await screenshot(ana, "members-03-en-1280-removed");
    const refused = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${benKey}` } });
    expect(refused.status).toBe(403);
    await ben.reload();
    await ben.getByRole("heading", { name: "Miembros de Personal" }).waitFor();
    expect(await ben.getByTestId("workspace-switcher").locator("option").allTextContents()).toEqual([
      "Personal · Propietario",
      "+ Nuevo espacio de trabajo…",
    ]);
    expect(await ben.evaluate(() => localStorage.getItem("builder.workspace"))).toBeNull();
    await screenshot(ben, "members-04-es-390-removed");
  });

  it("on a phone in English the header and the page fit 390 px", async () => {
    await ana.setViewportSize({ width: 390, height: 844 });
    await ana.reload();
    await ana.getByRole("heading", { name: "Members of Cardiology" }).waitFor();
    expect(await ana.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(ana, "members-05-en-390-owner");
  });
});
