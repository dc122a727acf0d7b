import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { experiments } from "../../src/db/schema.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython } from "../fixtures/serving/fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { fixtureRow, fixtureWithBaseline, predict } from "../integration/monitoring-fixtures.js";
import { axeViolations, ensureDashboardBuilt, haveChromium, launchChromium, screenshot, signInThroughPage } from "./browser.js";

// Issue 49 item 7: the model page's Monitoring tab shows what GET /v1/models/{id}/monitoring says. A table model with
// a baseline (the serving fixture, monitoring-fixtures.ts) answers 120 predictions, the second half with age shifted
// by 30 years; outcomes come back for 60 of them through the API and for 20 more through the tab's CSV upload. The
// tab's figures are then compared with the API's own answer, in English and Spanish, at 1280 px and on a 360 px phone.

const EXPERIMENT = 41;
const en = (v: number, o: Intl.NumberFormatOptions = {}) => new Intl.NumberFormat("en", o).format(v);
const pct = (v: number) => en(v, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });
const fixed3 = (v: number) => en(v, { minimumFractionDigits: 3, maximumFractionDigits: 3, useGrouping: false });

describe.skipIf(!haveChromium || !haveFixturePython)("dashboard: the Monitoring tab (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let alice: UserWithKey;
  let modelDir: string;
  const ids: string[] = [];
  const labelOf = (i: number) => (fixtureRow(i)[0] > 60 ? "1" : "0");

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite", { MONITORING_FLUSH_MS: "600000" });
    alice = await createUserWithKey(server);
    modelDir = fixtureWithBaseline();
    await publishFixture(server, alice.userId, EXPERIMENT, modelDir);
    const m = JSON.parse(fs.readFileSync(path.join(modelDir, "manifest.json"), "utf8"));
    // The model page shows a ready experiment's results (and its tabs) beside its metrics: the build's.
    await server.services.db.update(experiments).set({ metrics: m.metrics.test }).where(eq(experiments.experimentId, EXPERIMENT));
    for (let i = 0; i < 120; i++) {
      const r = await predict(server, alice.key, EXPERIMENT, fixtureRow(i, i < 60 ? 0 : 30));
      expect(r.status).toBe(201);
      ids.push(r.requestId);
    }
    const res = await fetch(`${server.url}/v1/models/${EXPERIMENT}/outcomes`, {
      method: "POST",
      headers: bearer(alice.key, { "content-type": "application/json" }),
      body: JSON.stringify(ids.slice(0, 60).map((request_id, i) => ({ request_id, label: labelOf(i) }))),
    });
    expect(res.status).toBe(200);
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (modelDir) fs.rmSync(modelDir, { recursive: true, force: true });
  });

  const report = async () => {
    const res = await fetch(`${server.url}/v1/models/${EXPERIMENT}/monitoring`, { headers: bearer(alice.key) });
    expect(res.status).toBe(200);
    return (await res.json()) as any;
  };
  const text = async (page: Page, testId: string) => ((await page.getByTestId(testId).textContent()) ?? "").replace(/\s+/g, " ");

  it("shows the API's figures, takes outcomes from a CSV, and passes axe, at 1280 px", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, alice.email, alice.password);
    await page.goto(`${server.url}/experiments/${EXPERIMENT}`);
    await page.getByTestId("tab-monitoring").click();
    await page.getByTestId("monitoring-predictions").waitFor();
    expect(new URL(page.url()).searchParams.get("tab")).toBe("monitoring");

    // 20 more outcomes through the tab's upload (with a row the server has never seen: it comes back unmatched).
    const csv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "outcomes-")), "outcomes.csv");
    const uploaded = ids.slice(60, 80).map((id, i) => `${id},${labelOf(60 + i)}`);
    fs.writeFileSync(csv, ["request_id,label", ...uploaded, "never-made-id,1"].join("\n"));
    await page.getByTestId("outcomes-file").setInputFiles(csv);
    await page.getByTestId("outcomes-result").waitFor();
    expect(await text(page, "outcomes-result")).toContain("21 outcomes sent, 20 matched to a prediction.");
    expect(await text(page, "outcomes-result")).toContain("never-made-id");
    await page.getByTestId("monitoring-coverage").filter({ hasText: "80 of 120" }).waitFor();

    const r = await report();
    expect(r.predictions).toBe(120);
    expect(r.outcomes.labelled).toBe(80);
    expect(await text(page, "monitoring-predictions")).toBe(en(r.predictions));
    expect(await text(page, "monitoring-coverage")).toBe(`${pct(r.outcomes.coverage)} 80 of 120 predictions`);
    expect(await text(page, "monitoring-positive-rate")).toContain(pct(r.decisions.positive_rate));
    expect(await text(page, "monitoring-positive-rate")).toContain(`${pct(r.decisions.baseline_positive_rate)} in the validation and test`);
    expect(await text(page, "monitoring-drift-status")).toBe(r.drift.status);
    // Realized figures with their intervals, as the API gives them; the estimate is labelled as one.
    for (const m of ["sensitivity", "specificity", "auc"]) {
      const v = r.performance.realized[m];
      expect(await text(page, `realized-${m}`)).toBe(`${fixed3(v.value)} (${fixed3(v.ci_low)}–${fixed3(v.ci_high)})`);
    }
    if (r.performance.estimated.sensitivity !== null)
      expect(await text(page, "estimated-sensitivity")).toBe(`${fixed3(r.performance.estimated.sensitivity)} estimate`);
    // The drift table in the API's order (the worst first), age drifted and on top, each row's severity the API's.
    const rows = page.getByTestId("drift-table").locator("tbody tr");
    expect(await rows.count()).toBe(r.drift.features.length);
    for (let i = 0; i < r.drift.features.length; i++) {
      const f = r.drift.features[i];
      expect(await rows.nth(i).getAttribute("data-testid")).toBe(`drift-row-${f.feature}`);
      expect(await text(page, `drift-severity-${f.feature}`)).toBe(f.severity.replaceAll("_", " "));
    }
    expect(r.drift.features[0].feature).toBe("age");
    expect(r.drift.features[0].drifted).toBe(true);
    expect(r.drift.features.find((f: any) => f.feature === "sex").drifted).toBe(false);
    // No rule was evaluated here: the alerts section says there is none.
    expect(r.alerts.open).toBe(0);
    expect(await text(page, "alerts-counts")).toBe("Open: 0 · resolved in this period: 0");
    await screenshot(page, "50-monitoring-1280-en");
    const serious = (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
    expect(serious).toEqual([]);
    await page.close();
  });

  it("reads in Spanish on a 360 px phone without sideways scrolling", async () => {
    const page = await browser.newPage({ viewport: { width: 360, height: 780 } });
    await signInThroughPage(page, server.url, alice.email, alice.password);
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByTestId("language").selectOption("es");
    await page.getByRole("heading", { name: "Ajustes → Cuenta" }).waitFor();
    await page.goto(`${server.url}/experiments/${EXPERIMENT}?tab=monitoring`);
    await page.getByTestId("monitoring-predictions").waitFor();
    const r = await report();
    expect(await page.getByTestId("tab-monitoring").textContent()).toBe("Seguimiento");
    expect(await text(page, "monitoring-coverage")).toContain(`de ${r.outcomes.records} predicciones`);
    const tab = (await page.getByTestId("monitoring").textContent()) ?? "";
    expect(tab).toContain("¿Se parecen los pacientes nuevos a los de prueba?");
    expect(tab).toContain("estimación");
    expect(tab).not.toMatch(/\b(Predictions|Outcomes received|Realized|Estimated|Send true outcomes|not enough data)\b/);
    // Nothing wider than the phone: the tables become cards.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, "51-monitoring-360-es");
    await page.close();
  });
});
