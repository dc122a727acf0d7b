import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedAccount, seedsA } from "../integration/chat-fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { personal } from "../helpers/auth.js";
import {
  SCREENSHOTS,
  axeViolations,
  ensureDashboardBuilt,
  haveChromium,
  launchChromium,
  seriousOrCritical,
  signInThroughPage,
} from "./browser.js";

// The chat panel (issue 39, item 6) in a real Chromium against a real Builder and its built-in assistant (no LLM).
// The experiments are seeded straight into the database with distinct test AUCs (42: 0.912, 7: 0.874, 16: 0.931,
// as the chat's integration tests do), so an answer about "this model" can be checked against the one on screen.

const EMAIL = "chat-panel@hospital.example";
const PASSWORD = "a long enough password";
const OTHER_AUCS = ["0.874", "0.931"];

describe.skipIf(!haveChromium)("dashboard: chat panel (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let userId: string;

  const panel = () => page.locator("#chat-panel");
  const toggle = () => page.getByRole("button", { name: /^(Ask Builder|Hide chat)$/ });
  const lastReply = () => panel().getByTestId("chat-assistant").last();
  const conversations = async () =>
    (await server.services.chat.listConversations(await personal(server.services.db, userId), 50, 0)).data.map((c) => ({
      title: c.title,
      messages: c.messages,
    }));

  /** Sends a question from the panel; returns the finished reply's text and the stream the server sent. */
  async function ask(question: string): Promise<{ reply: string; stream: string }> {
    const input = panel().getByRole("textbox", { name: "Your question" });
    await input.fill(question);
    const response = page.waitForResponse((r) => r.url().endsWith("/v1/chat") && r.request().method() === "POST");
    await input.press("Enter");
    const res = await response;
    expect(res.headers()["content-type"]).toMatch(/^text\/event-stream/);
    const stream = await res.text();
    await panel().locator(".chat-msg.assistant[aria-busy]").waitFor({ state: "detached" });
    return { reply: (await lastReply().textContent()) ?? "", stream };
  }

  /** Every visible button and link of the page's main content lies left of the docked panel, and is the element at its centre. */
  async function mainActionsUncovered(): Promise<void> {
    const box = await panel().boundingBox();
    expect(box).not.toBeNull();
    const actions = page.locator("main").locator("button:visible, a:visible, input:visible, select:visible, textarea:visible");
    const n = await actions.count();
    expect(n).toBeGreaterThan(3);
    for (let i = 0; i < n; i++) {
      const a: Locator = actions.nth(i);
      const b = await a.boundingBox();
      if (!b || b.y > 800 || b.y + b.height < 0) continue; // off screen: scrolled to, it is still left of the panel
      expect(b.x + b.width, `${await a.evaluate((e) => e.outerHTML.slice(0, 80))} reaches under the chat panel`).toBeLessThanOrEqual(
        box!.x + 1,
      );
    }
  }

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    const seeds = seedsA(userId).filter((s) => [42, 7, 16].includes(s.id));
    seeds.find((s) => s.id === 42)!.name = "Breast cancer (WDBC)";
    await seedAccount(server, userId, seeds);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: "en-US" });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("on an experiment's page it answers about that experiment, streamed, and leaves the page's buttons uncovered", async () => {
    await page.goto(`${server.url}/experiments/42`);
    await page.getByRole("heading", { name: /^Breast cancer \(WDBC\) #42/ }).waitFor();
    expect(await page.locator("#chat-panel").count()).toBe(0); // closed: its code is not even loaded
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await toggle().click();
    await panel().getByRole("heading", { name: "Ask Builder" }).waitFor();
    expect(await toggle().getAttribute("aria-expanded")).toBe("true");
    // Opened from the button, focus goes to the question box.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("chat-input");
    expect(await panel().getByTestId("chat-context").textContent()).toContain("experiment #42");
    await mainActionsUncovered();

    const { reply, stream } = await ask("what is this model's AUC?");
    // The reply came as a stream: several token events, then the stored answer.
    expect(stream.match(/^event: token$/gm)?.length ?? 0).toBeGreaterThan(3);
    expect(stream).toMatch(/^event: done$/m);
    expect(reply).toContain("0.912");
    for (const other of OTHER_AUCS) expect(reply).not.toContain(other);
    expect(await panel().getByRole("log").getAttribute("aria-live")).toBe("polite");

    // The same question in Spanish, in the same conversation.
    const es = await ask("¿qué AUC tiene este modelo?");
    expect(es.reply).toContain("0.912");
    for (const other of OTHER_AUCS) expect(es.reply).not.toContain(other);
    expect(await conversations()).toEqual([{ title: "what is this model's AUC?", messages: 4 }]);

    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await mainActionsUncovered();
    await page.screenshot({ path: path.join(SCREENSHOTS, "39-chat-panel-1280.png") }); // the viewport: the panel is fixed
  });

  it("shows a reply that quotes HTML as text", async () => {
    const hostile = "what is the AUC of <img src=x onerror=\"document.title='pwned'\"> this model?";
    const { reply } = await ask(hostile);
    expect(reply).toContain("0.912");
    expect(await panel().locator("img").count()).toBe(0);
    expect(await panel().getByTestId("chat-user").last().textContent()).toContain("<img src=x onerror=\"document.title='pwned'\">");
    expect(await page.title()).not.toBe("pwned");
  });

  it("lists the conversation, reopens it, deletes it", async () => {
    await panel().getByRole("button", { name: "New conversation" }).click();
    expect(await panel().getByTestId("chat-assistant").count()).toBe(0);
    // The panel focuses the box on the next animation frame (after React has re-rendered the emptied log).
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("chat-input");

    await panel().getByRole("button", { name: "Your conversations" }).click();
    const list = panel().getByRole("list", { name: "Your conversations" });
    const row = list.getByRole("listitem").filter({ hasText: "what is this model's AUC?" });
    await row.waitFor();
    expect(await row.textContent()).toContain("6 messages");
    await page.screenshot({ path: path.join(SCREENSHOTS, "39-chat-conversations-1280.png") });

    await row.getByRole("button", { name: /^what is this model's AUC\?/ }).click();
    await panel().getByTestId("chat-assistant").nth(2).waitFor();
    expect(await panel().getByTestId("chat-user").allTextContents()).toEqual([
      "Youwhat is this model's AUC?",
      "You¿qué AUC tiene este modelo?",
      expect.stringContaining("<img src=x"),
    ]);
    expect(await panel().getByTestId("chat-assistant").first().textContent()).toContain("0.912");
    // A follow-up goes to the reopened conversation, not a new one.
    await ask("and its recall?");
    expect(await conversations()).toEqual([{ title: "what is this model's AUC?", messages: 8 }]);
    // A reload keeps the panel open on the same conversation (this tab's session storage), focus left on the page.
    await page.reload();
    await panel().getByTestId("chat-user").nth(3).waitFor();
    expect(await panel().getByTestId("chat-assistant").count()).toBe(4);
    expect(await page.evaluate(() => document.activeElement?.id)).not.toBe("chat-input");

    await panel().getByRole("button", { name: "Your conversations" }).click();
    await row.getByRole("button", { name: "Delete the conversation “what is this model's AUC?”" }).click();
    // Asked once more in the row; Keep is focused, so a stray Enter deletes nothing.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Keep");
    await row.getByRole("button", { name: "Delete", exact: true }).click();
    await panel().getByText("No conversations yet.").waitFor();
    expect(await conversations()).toEqual([]);
  });

  it("keyboard: Escape closes the panel and gives focus back; on another page it asks about every experiment", async () => {
    await panel().getByRole("button", { name: "Your conversations" }).click(); // back to the conversation view
    await panel().getByRole("textbox", { name: "Your question" }).focus();
    await page.keyboard.press("Escape");
    expect(await panel().isHidden()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Ask Builder");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("chat-input");

    await page.getByRole("link", { name: "Experiments", exact: true }).click();
    await page.getByRole("heading", { name: "Experiments" }).waitFor();
    expect(await panel().getByTestId("chat-context").textContent()).toContain("all your experiments");
    await mainActionsUncovered();
  });

  it("on a 390 px phone, in Spanish: the button sits in the top bar, the panel is a full-screen sheet with its own close button", async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, locale: "en-US", isMobile: true, hasTouch: true });
    try {
      await signInThroughPage(phone, server.url, EMAIL, PASSWORD);
      await phone.evaluate(() => localStorage.setItem("builder.language", "es")); // the Account page's switch, remembered
      await phone.goto(`${server.url}/experiments/42`);
      await phone.getByRole("heading", { name: /^Breast cancer \(WDBC\) #42/ }).waitFor();
      const button = phone.getByRole("button", { name: "Preguntar a Builder" });
      const b = (await button.boundingBox())!;
      const header = (await phone.locator("header.top").boundingBox())!;
      expect(b.y + b.height).toBeLessThanOrEqual(header.y + header.height); // in the bar, not floating over the page
      expect(b.x + b.width).toBeLessThanOrEqual(390);
      await phone.screenshot({ path: path.join(SCREENSHOTS, "39-chat-closed-390-es.png") });

      await button.click();
      const sheet = phone.locator("#chat-panel");
      await sheet.getByRole("heading", { name: "Pregunte a Builder" }).waitFor();
      const s = (await sheet.boundingBox())!;
      expect([s.x, s.width]).toEqual([0, 390]);
      // The page behind the sheet is out of reach of Tab and of a screen reader while the sheet is open.
      expect(await phone.locator("main").getAttribute("inert")).not.toBeNull();
      expect(await phone.locator("header.top").getAttribute("inert")).not.toBeNull();
      expect(await sheet.getByTestId("chat-context").textContent()).toContain("experimento n.º 42");
      await sheet.getByRole("textbox", { name: "Su pregunta" }).fill("¿qué AUC tiene este modelo?");
      await sheet.getByRole("button", { name: "Enviar" }).click();
      await sheet.getByTestId("chat-assistant").waitFor();
      await sheet.locator(".chat-msg.assistant[aria-busy]").waitFor({ state: "detached" });
      const reply = (await sheet.getByTestId("chat-assistant").last().textContent()) ?? "";
      expect(reply).toContain("0.912");
      for (const other of OTHER_AUCS) expect(reply).not.toContain(other);
      // Nothing in the sheet scrolls sideways.
      expect(await sheet.evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
      expect(seriousOrCritical(await axeViolations(phone))).toEqual([]);
      await phone.screenshot({ path: path.join(SCREENSHOTS, "39-chat-open-390-es.png") });

      await sheet.getByRole("button", { name: "Cerrar el chat" }).click();
      expect(await sheet.isHidden()).toBe(true);
      expect(await phone.locator("main").getAttribute("inert")).toBeNull();
      expect(await phone.evaluate(() => document.activeElement?.textContent)).toBe("Preguntar a Builder");
      // The page is back on top: its heading is what a tap there reaches.
      const h1 = (await phone.locator("main h1").boundingBox())!;
      expect(
        await phone.evaluate(([x, y]) => document.elementFromPoint(x, y)?.closest("main") !== null, [h1.x + 10, h1.y + h1.height / 2]),
      ).toBe(true);
    } finally {
      await phone.close();
    }
  });
});
