import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experimentRequestSchema, requestHash, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";
import { dataRequest } from "../integration/experiments-fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, signInThroughPage } from "./browser.js";
import { personalWorkspaceId } from "../helpers/auth.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// Issue 42, finding 5: a user's open events streams are capped (EVENT_STREAMS_PER_USER). A browser's EventSource
// never retries a refused (non-200) stream by itself, so an experiment page opened while the user's other tabs
// or programs hold every slot used to freeze; it now falls back to polling and still follows the experiment.

const EMAIL = "streams-user@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium)("dashboard: experiment page when the user's stream slots are taken (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let userId: string;
  let apiKey: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    // One slot per user; JOB_LEASE_S 600: the row written below stays queued, no runner takes it.
    server = await startTestServer("pglite", { EVENT_STREAMS_PER_USER: "1", JOB_LEASE_S: "600" });
    userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    apiKey = (await server.services.auth.apiKeys.create(userId, { scopes: ALL_KEY_SCOPES, name: "script" })).key;
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  it("a refused stream (429 too_many_streams) falls back to polling: the page still reaches the final status", async () => {
    const request = withoutToken(experimentRequestSchema.parse(dataRequest(userId, 1, `${userId}/x/d.zip`, ["f1"])));
    const row = (await server.services.experiments.repo.insert({
      userId,
      workspaceId: await personalWorkspaceId(server.services.db, userId),
      experimentId: 1,
      request,
      study: studyOf(request, server.services.config),
      requestHash: requestHash(request),
    }))!;

    // A program of the same user holds the one slot.
    const held = new AbortController();
    const program = await fetch(`${server.url}/v1/experiments/1/events`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: held.signal,
    });
    expect(program.status).toBe(200);
    try {
      const refused = page.waitForResponse((r) => r.url().endsWith("/v1/experiments/1/events"));
      await page.goto(`${server.url}/experiments/1`);
      expect((await refused).status()).toBe(429);
      await page.locator('[data-testid="experiment"][data-status="queued"]').waitFor();

      await server.services.experiments.repo.transition(row.id, "cancelled", { fromStatus: ["queued"] });
      // Polling starts at 1 s and doubles; 15 s covers the first few polls.
      await page.locator('[data-testid="experiment"][data-status="cancelled"]').waitFor({ timeout: 15_000 });
    } finally {
      held.abort();
    }
  }, 60_000);
});
