import type { Browser, BrowserContext, Page } from "playwright-core";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workspaces } from "../../src/db/schema.js";
import { WorkspaceMemberRepository } from "../../src/workspaces/workspace.repository.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot } from "./browser.js";

// Issue 50 items 3 and 6 in a real Chromium, in Spanish at 1280 px: Ana, the owner of "Cardiología", sees on the keys
// page the key her colleague Ben made there (with his e-mail) and revokes it — his program is refused at once; Ben,
// an editor, has no danger zone; Ana deletes the workspace from Settings → Members by typing its name and lands in
// her personal workspace, where there is no danger zone either.

const ANA = { email: "ana@hospital.example", password: "ana's long enough password" };
const BEN = { email: "ben@hospital.example", password: "ben's long enough password" };
const NAME = "Cardiología";

describe.skipIf(!haveChromium)("dashboard: an owner's keys page and the danger zone (Chromium, Spanish)", () => {
  let server: TestServer;
  let browser: Browser;
  let anaContext: BrowserContext;
  let ana: Page;
  let ws = "";
  let benKey = "";

  /** Signs in with the context's cookie jar and chooses the workspace, as the switcher would. */
  const open = async (context: BrowserContext, who: typeof ANA, path: string) => {
    expect((await context.request.post(`${server.url}/v1/session`, { data: who })).status()).toBe(200);
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.evaluate((id) => localStorage.setItem("builder.workspace", id), ws);
    await page.goto(`${server.url}${path}`);
    return page;
  };
  const readWith = async (key: string) =>
    (await fetch(`${server.url}/v1/experiments`, { headers: { authorization: `Bearer ${key}` } })).status;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    const { auth, db } = server.services;
    const a = await auth.users.create(ANA);
    const b = await auth.users.create(BEN);
    [{ id: ws }] = await db.insert(workspaces).values({ name: NAME }).returning({ id: workspaces.id });
    const members = new WorkspaceMemberRepository(db);
    await members.add(ws, a.id, "owner");
    await members.add(ws, b.id, "editor");
    // Ben's program's key (made when Ben could, or by the CLI): read-only, in the shared workspace.
    benKey = (await auth.apiKeys.create(b.id, { workspaceId: ws, scopes: ["read"], name: "script-de-ben" })).key;
    browser = await launchChromium();
    anaContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "es-ES" });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("Ana sees Ben's key of the workspace, who made it, and revokes it: his program is refused at once", async () => {
    expect(await readWith(benKey)).toBe(200);
    ana = await open(anaContext, ANA, "/settings/api");
    await ana.getByRole("heading", { name: "Claves de este espacio de trabajo" }).waitFor();
    await ana.getByTestId("every-member-keys").waitFor();
    const row = ana.locator('tr[data-key-name="script-de-ben"]');
    expect(await row.getByTestId("key-maker").textContent()).toBe(`por ${BEN.email}`);
    expect(await row.getByTestId("key-scopes-cell").textContent()).toContain("read");
    await screenshot(ana, "team-keys-01-es-1280-owner-keys");
    await row.getByRole("button", { name: "Revocar script-de-ben" }).click();
    expect(await row.textContent()).toContain(`creada por ${BEN.email}`);
    await row.getByRole("button", { name: "Sí, revocar" }).click();
    await expect.poll(() => readWith(benKey)).toBe(403);
    // Revoked keys are hidden unless asked for: the row is gone from the list.
    await expect.poll(() => row.count()).toBe(0);
  });

  it("Ben, an editor, has no danger zone on the members page", async () => {
    const benContext = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "es-ES" });
    const ben = await open(benContext, BEN, "/settings/members");
    await ben.getByRole("heading", { name: `Miembros de ${NAME}` }).waitFor();
    expect(await ben.getByTestId("danger-zone").count()).toBe(0);
    await benContext.close();
  });

  it("Ana deletes the workspace from the danger zone by typing its name and lands in her personal workspace", async () => {
    await ana.goto(`${server.url}/settings/members`);
    const zone = ana.getByTestId("danger-zone");
    await zone.waitFor();
    expect(await zone.textContent()).toContain("No se puede deshacer");
    const button = zone.getByRole("button", { name: "Eliminar este espacio de trabajo para siempre" });
    await zone.getByTestId("danger-zone-name").fill("Cardiologia"); // not quite its name
    expect(await button.isDisabled()).toBe(true);
    await zone.getByTestId("danger-zone-name").fill(NAME);
    expect(await button.isDisabled()).toBe(false);
    await screenshot(ana, "team-keys-02-es-1280-danger-zone");
    await button.click();
    await ana.getByRole("status").filter({ hasText: "se está eliminando" }).waitFor();
    expect(await ana.evaluate(() => localStorage.getItem("builder.workspace"))).toBeNull();
    expect(await ana.getByTestId("danger-zone").count()).toBe(0); // the personal workspace has none
    await screenshot(ana, "team-keys-03-es-1280-deleted");
    const { db } = server.services;
    await expect.poll(async () => (await db.select().from(workspaces).where(eq(workspaces.id, ws))).length, { timeout: 30_000 }).toBe(0);
  });
});
