import fs from "node:fs";
import path from "node:path";
import sharp from "sharp";
import yauzl from "yauzl";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot, signInThroughPage } from "./browser.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// Issue 38 item 3 on the Try-it page of an image classifier: a zip of images sent with Grad-CAM overlays is followed
// live over its events stream (waiting behind another file, then "n of N images"), and once done the page offers
// results.csv and overlays.zip, whose pictures are named as the images. With the user's one stream slot taken
// (EVENT_STREAMS_PER_USER 1) the page falls back to polling and still reaches the end.

const EMAIL = "batch-images@hospital.example";
const PASSWORD = "a long enough password";
const ID = 41;

describe.skipIf(!haveChromium || !haveFixturePython)("dashboard: scoring a zip of images with overlays (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let apiKey: string;
  const image = fs.readFileSync(path.join(servingFixtures().dir, "images", "rgb.png"));
  const zipOf = (n: number, prefix: string) =>
    makeZip(Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${String(i).padStart(3, "0")}.png`, image])));
  /** A batch sent by a program of the same user: it holds the queue while the page's batch waits behind it. */
  const program = async (n: number) => {
    const res = await fetch(`${server.url}/v1/models/${ID}/batch`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/zip" },
      body: new Uint8Array(zipOf(n, "held/")),
    });
    expect(res.status).toBe(202);
    return ((await res.json()) as { batch_id: string }).batch_id;
  };

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite", { EVENT_STREAMS_PER_USER: "1" });
    const userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    apiKey = (await server.services.auth.apiKeys.create(userId, { scopes: ALL_KEY_SCOPES, name: "script" })).key;
    await publishFixture(server, userId, ID, servingFixtures().modelDir("vision_binary"));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  /** The progress panel's texts as they change, until it says Done (or failed). */
  async function follow(shotName?: string): Promise<string[]> {
    const seen: string[] = [];
    const panel = page.getByTestId("batch-progress");
    let shot = false;
    for (let i = 0; i < 1200; i++) {
      const text = (await panel.count()) ? ((await panel.textContent()) ?? "") : "";
      if (text && text !== seen.at(-1)) seen.push(text);
      if (shotName && !shot && text.startsWith("Scoring:")) {
        shot = true;
        await screenshot(page, shotName);
      }
      if (/^Done:|not scored/.test(text)) return seen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the batch did not finish: ${seen.join(" | ")}`);
  }

  it("progress over the events stream (waiting, then n of N images), then results.csv and overlays.zip to download", async () => {
    await page.goto(`${server.url}/experiments/${ID}/try`);
    await page.getByTestId("batch-overlays").check();
    // Held long enough (1,500 images, several seconds) that the page's file waits behind it.
    const held = await program(1500);
    for (let i = 0; i < 200; i++) {
      const b = (await (await fetch(`${server.url}/v1/batches/${held}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as {
        status: string;
      };
      if (b.status === "running") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const stream = page.waitForResponse((r) => /\/v1\/batches\/[0-9a-f-]+\/events$/.test(r.url()));
    await page
      .getByTestId("batch-input")
      .setInputFiles({ name: "clinic-scans.zip", mimeType: "application/zip", buffer: zipOf(300, "scans/p") });
    expect((await stream).status()).toBe(200);
    const seen = await follow("45-try-images-batch-progress");
    expect(seen[0]).toBe("Waiting to start: files are scored one at a time, in the order they were sent.");
    expect(seen.some((t) => /^Scoring: [\d,]+ of 300 images \(\d+%\) · with Grad-CAM overlays$/.test(t))).toBe(true);
    expect(seen.at(-1)).toMatch(/^Done: 300 images, 300 scored\./);
    await screenshot(page, "46-try-images-batch-overlays");

    const row = page.getByTestId("batches").locator("tbody tr").first();
    expect(await row.locator("td").allTextContents()).toEqual([
      "clinic-scans.zip",
      expect.any(String),
      "done",
      "300 of 300",
      "0",
      "results.csvoverlays.zip",
    ]);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByTestId("overlays-download").click()]);
    expect(download.suggestedFilename()).toMatch(/overlays\.zip$/);
    const bytes = fs.readFileSync((await download.path())!);
    const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
      yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))),
    );
    const names: string[] = [];
    let first: Buffer | undefined;
    await new Promise<void>((resolve, reject) => {
      zip.on("entry", (e: yauzl.Entry) => {
        names.push(e.fileName);
        if (first) return zip.readEntry();
        zip.openReadStream(e, (err, s) => {
          if (err) return reject(err);
          const chunks: Buffer[] = [];
          s.on("data", (c: Buffer) => chunks.push(c)).on("end", () => ((first = Buffer.concat(chunks)), zip.readEntry()));
        });
      });
      zip.on("end", resolve).on("error", reject);
      zip.readEntry();
    });
    expect(names).toEqual(Array.from({ length: 300 }, (_, i) => `scans/p${String(i).padStart(3, "0")}.png`));
    expect(await sharp(first).metadata()).toMatchObject({ format: "png", width: 103, height: 77 });
  }, 120_000);

  it("with the user's one stream slot taken by a program, the page polls and still reaches the end", async () => {
    const held = await program(400);
    const abort = new AbortController();
    const other = await fetch(`${server.url}/v1/batches/${held}/events`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: abort.signal,
    });
    expect(other.status).toBe(200);
    try {
      await page.goto(`${server.url}/experiments/${ID}/try`);
      const refused = page.waitForResponse((r) => /\/v1\/batches\/[0-9a-f-]+\/events$/.test(r.url()));
      await page.getByTestId("batch-input").setInputFiles({ name: "more.zip", mimeType: "application/zip", buffer: zipOf(20, "more/p") });
      expect((await refused).status()).toBe(429);
      const seen = await follow();
      expect(seen.at(-1)).toMatch(/^Done: 20 images, 20 scored\./);
    } finally {
      abort.abort();
    }
  }, 120_000);
});
