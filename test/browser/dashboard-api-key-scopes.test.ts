import { sql } from "drizzle-orm";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { axeViolations, ensureDashboardBuilt, haveChromium, launchChromium, screenshot, seriousOrCritical } from "./browser.js";

// Issue 50 item 3 in a real Chromium: Settings → API makes a key with scopes (predict ticked), only some models and
// an expiry; the list shows scopes, models, expiry (expired keys marked), who made the key and its last use; a key
// made before scopes says in a sentence that it keeps full access. English at 1280 px, Spanish on a phone.

const EMAIL = "radiologist@hospital.example";
const PASSWORD = "a long enough passphrase";

describe.skipIf(!haveChromium)("dashboard: API-key scopes (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let userId: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    const { auth, db } = server.services;
    // A key from before scopes (the upgrade leaves scopes NULL) and one whose expiry has passed.
    const legacy = await auth.apiKeys.create(userId, { name: "old-pipeline" });
    await db.execute(sql`update api_keys set scopes = null where id = ${legacy.info.id}`);
    const expired = await auth.apiKeys.create(userId, { name: "last-year", scopes: ["read"] });
    await db.execute(sql`update api_keys set expires_at = now() - interval '1 day' where id = ${expired.info.id}`);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  async function open(locale: string, width: number, height: number): Promise<{ ctx: BrowserContext; page: Page }> {
    const ctx = await browser.newContext({ locale, viewport: { width, height } });
    const page = await ctx.newPage();
    // Signed in through the API's own cookie: the Spanish sign-in page names its fields in Spanish.
    const res = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    const pair = res.headers.get("set-cookie")!.split(";")[0];
    const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
    await ctx.addCookies([{ name, value, url: server.url }]);
    await page.goto(`${server.url}/settings/api`);
    await page.getByTestId("keys").waitFor();
    return { ctx, page };
  }

  it("1280 px, English: makes a predict+read key that expires, and lists scopes, models, expiry, maker and last use", async () => {
    const { ctx, page } = await open("en-GB", 1280, 900);
    const legacyNote = page.getByTestId("legacy-keys");
    expect(await legacyNote.textContent()).toContain("One key was made before key scopes existed: it keeps full access");
    expect(await legacyNote.textContent()).toContain("Replace it with a key that has only the scopes its program needs");
    const oldRow = page.locator("tr[data-key-name='old-pipeline']");
    expect(await oldRow.textContent()).toContain("full access (made before scopes)");
    expect(await page.locator("tr[data-key-name='last-year']").textContent()).toMatch(/expired /);

    // predict is ticked already: the least a program needs.
    const scopes = page.getByTestId("key-scopes");
    expect(await scopes.getByLabel(/predict:/).isChecked()).toBe(true);
    expect(await scopes.getByLabel(/read:/).isChecked()).toBe(false);
    await page.getByLabel("Name").fill("reporting");
    await scopes.getByLabel(/read:/).check();
    await page.getByLabel("Expires on (optional)").fill("2099-12-31");
    await page.getByRole("button", { name: "Generate new key" }).click();
    const key = (await page.getByTestId("new-key-value").textContent())!.trim();
    expect(await page.getByTestId("new-key").textContent()).toContain("Scopes: predict, read.");
    await screenshot(page, "key-scopes-00-en-new-key");

    // The key does what it says: it reads, and it may not build.
    expect((await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const build = await fetch(`${server.url}/v1/experiments`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(build.status).toBe(403);
    expect(((await build.json()) as { error: { code: string } }).error.code).toBe("api_key_scope_missing");
    await server.services.auth.apiKeys.flush();

    await page.reload();
    const row = page.locator("tr[data-key-name='reporting']");
    await row.waitFor();
    const text = (await row.textContent())!;
    expect(text).toContain("predict");
    expect(text).toContain("read");
    // The maker: the page says "by you" for the caller's own key (another member's shows their e-mail).
    expect(text).toContain("by you");
    expect(text).toContain("2099");
    expect(text).not.toContain("never"); // last used: just now; expiry: a date
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "key-scopes-01-en-1280");
    await ctx.close();
  });

  it("phone, Spanish: the form and the list read in Spanish, with the legacy key's sentence, and nothing overflows the screen", async () => {
    const { ctx, page } = await open("es-ES", 390, 844);
    await page.getByRole("heading", { name: "Ajustes → API" }).waitFor();
    expect(await page.getByTestId("legacy-keys").textContent()).toContain("conserva acceso total");
    expect(await page.getByTestId("key-scopes").textContent()).toContain("Qué puede hacer la clave");
    expect(await page.getByTestId("key-models").textContent()).toContain("Todavía no hay modelos publicados");
    expect(await page.locator("tr[data-key-name='last-year']").textContent()).toContain("caducó el");
    // The page itself does not scroll sideways on a phone (the table scrolls in its own box).
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    // A key with no scope is refused in the page, in Spanish, before it reaches the server.
    await page.getByLabel("Nombre").fill("sin-permisos");
    await page
      .getByTestId("key-scopes")
      .getByLabel(/predict:/)
      .uncheck();
    await page.getByRole("button", { name: "Generar una clave nueva" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("Elija al menos un permiso.");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "key-scopes-02-es-phone");
    await ctx.close();
  });
});
