import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { chromium, type Browser, type Page } from "playwright-core";

// A real headless Chromium (Debian's package: Playwright's own browser download needs the network) driven by
// playwright-core, against the built dashboard served by a real Builder.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const haveChromium = fs.existsSync(CHROMIUM);
const ROOT = path.resolve(import.meta.dirname, "../..");
export const DIST = path.join(ROOT, "web/dist");
export const SCREENSHOTS = path.join(ROOT, ".test-results/screenshots");

function newestMtime(dir: string): number {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((t, e) => Math.max(t, fs.statSync(path.join(e.parentPath, e.name)).mtimeMs), 0);
}

/**
 * Builds web/dist when it is missing or older than web/src or the catalog it bundles (locales/), as make does (make
 * test builds it first; a lone vitest run may not).
 */
export function ensureDashboardBuilt(): void {
  const index = path.join(DIST, "index.html");
  const newest = Math.max(newestMtime(path.join(ROOT, "web/src")), newestMtime(path.join(ROOT, "locales")));
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= newest) return;
  // vitest sets NODE_ENV=test, which would make Vite ship React's development build: build as make does.
  execFileSync("npm", ["run", "build:web"], { cwd: ROOT, stdio: "inherit", env: { ...process.env, NODE_ENV: "production" } });
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** Signs in through the dashboard's own form and waits for the experiments list. */
export async function signInThroughPage(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Experiments" }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** Runs axe-core in the page (through the DevTools protocol, so the page's CSP does not block it). */
export async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; nodes: number }>> {
  const source = fs.readFileSync(path.join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
  await page.evaluate(source);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: unknown,
          ) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: unknown[] }> }>;
        };
      }
    ).axe;
    const r = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
}

export function seriousOrCritical(v: Array<{ impact: string }>) {
  return v.filter((x) => x.impact === "serious" || x.impact === "critical");
}

/** The first-load JavaScript: the entry script and the modules index.html preloads, gzipped. */
export function firstLoadJsBytes(): { raw: number; gzip: number; files: string[] } {
  const html = fs.readFileSync(path.join(DIST, "index.html"), "utf8");
  const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  let raw = 0,
    gzip = 0;
  for (const f of files) {
    const bytes = fs.readFileSync(path.join(DIST, f));
    raw += bytes.length;
    gzip += zlib.gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip, files };
}
