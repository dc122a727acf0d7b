import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishFixture } from "../fixtures/serving/publish.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
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

// Using a table model by hand, safely (issue 38 item 5): a whole CSV row pasted into the form fills every field; a
// result goes as soon as an input changes; a value outside the training range is flagged before and after scoring;
// an emptied field is null in the snippet, never 0. The model is the serving fixture tabular_binary, published as a
// build would (columns age 18-95, sex (2 codes), bmi 14-60, site (3 codes)).

const EMAIL = "try-table@hospital.example";
const PASSWORD = "a long enough password";

describe.skipIf(!haveChromium || !haveFixturePython)("dashboard: Try it on a table model (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ensureDashboardBuilt();
    server = await startTestServer("pglite");
    const userId = (await server.services.auth.users.create({ email: EMAIL, password: PASSWORD })).id;
    await publishFixture(server, userId, 31, servingFixtures().modelDir("tabular_binary"));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
  });

  const field = (name: string) => page.getByRole("spinbutton", { name: new RegExp(`^${name}\\b`) });
  const paste = (name: string, text: string) =>
    field(name).evaluate((input, t) => {
      const data = new DataTransfer();
      data.setData("text/plain", t);
      input.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    }, text);

  it("a pasted header line and row fill the fields by name; a pasted row of the wrong length is refused in words", async () => {
    await page.goto(`${server.url}/experiments/31/try`);
    await field("age").waitFor();
    // copied from a training CSV: patient id and label included, columns in another order
    await paste("age", "patient_id,site,outcome,bmi,sex,age\nP-0042,2,1,31.5,1,67");
    expect(await Promise.all(["age", "sex", "bmi", "site"].map((n) => field(n).inputValue()))).toEqual(["67", "1", "31.5", "2"]);

    await paste("bmi", "1,2,3");
    expect(await page.getByRole("alert").textContent()).toContain("the row has 3 values; this model takes 4 (age, sex, bmi, site)");
    expect(await field("age").inputValue()).toBe("67"); // nothing changed
  });

  it("a value outside the training range is flagged beside its field and beside the score; any change clears the result", async () => {
    await paste("age", "-40\t1\t31.5\t2");
    await page.getByTestId("range-warning-0").waitFor();
    expect(await page.getByTestId("range-warning-0").textContent()).toContain("outside the training range (18 – 95)");
    await page.getByRole("button", { name: "Predict" }).click();
    await page.getByTestId("prediction").waitFor();
    expect(await page.getByTestId("range-note").textContent()).toContain("age -40");
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
    await screenshot(page, "40-try-table-out-of-range");

    await field("age").fill("67");
    expect(await page.getByTestId("prediction").count()).toBe(0); // the old result is gone with the old input
    expect(await page.getByTestId("range-warning-0").count()).toBe(0);
    await page.getByRole("button", { name: "Predict" }).click();
    await page.getByTestId("prediction").waitFor();
    expect(await page.getByTestId("range-note").count()).toBe(0);
  });

  it("an emptied field is null in the snippet, with a word to fill it in", async () => {
    await field("bmi").fill("");
    // The snippet follows the field after React's next render: wait for it rather than read it at once.
    await expect.poll(() => page.getByTestId("snippet-curl").textContent()).toContain('{"message":[67,1,null,2]}');
    await page.getByText("Empty fields are written as null").waitFor();
    await screenshot(page, "41-try-table-empty-field");
  });

  it("a whole CSV is scored as a batch: progress in a table, then results.csv to download", async () => {
    const rows = ["patient_id,age,sex,bmi,site", "P1,54,F,31.5,north", "P2,230,M,22.0,east", "P3,40,X,25.0,south"];
    await page
      .getByTestId("batch-input")
      .setInputFiles({ name: "clinic-export.csv", mimeType: "text/csv", buffer: Buffer.from(rows.join("\n") + "\n") });
    const link = page.getByTestId("batches").getByRole("link", { name: "results.csv" });
    await link.waitFor({ timeout: 30_000 });
    const cells = await page.getByTestId("batches").locator("tbody tr").first().locator("td").allTextContents();
    expect(cells[0]).toBe("clinic-export.csv");
    expect(cells.slice(2)).toEqual(["done", "3 of 3", "1", "1", "results.csv"]);
    const csv = await (await page.request.get(`${server.url}${await link.getAttribute("href")}`)).text();
    const lines = csv.trim().split("\n");
    expect(lines[0]).toBe("id,prediction,score_risk-0,score_risk-1,out_of_range,error");
    expect(lines[2]).toMatch(/^P2,risk-\d,[\d.e-]+,[\d.e-]+,age,$/);
    expect(lines[3]).toBe("P3,,,,,sex: a value the model did not see in training");
    await screenshot(page, "44-try-table-batch");
  });
});
