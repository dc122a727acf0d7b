import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { ensureDashboardBuilt, haveChromium, launchChromium, screenshot } from "./browser.js";

// The New experiment form on react-hook-form, checked with the server's own request schema (issue 53 item 5): a
// Spanish clinician's table with Spanish headers gets column 2 proposed as the label, and however the label is
// changed, no request with a column in two roles (or with no label) leaves the page. Every request the page sends
// to POST /v1/experiments and /v1/datasets/validate is recorded here to prove it.

const EMAIL = "form@hospital.example";
const PASSWORD = "a long enough password";

interface Sent {
  path: string;
  body: { label_cols: string[]; data_cols: string[] | null; images_col?: string | null; split_col?: string | null };
}

describe.skipIf(!haveChromium)("dashboard: the new-experiment form refuses conflicting requests (Chromium, Spanish)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let tmp: string;
  const sent: Sent[] = [];

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-new-form-"));
    server = await startTestServer("pglite");
    await server.services.auth.users.create({ email: EMAIL, password: PASSWORD });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, locale: "es-ES" });
    const record = (r: Request) => sent.push({ path: new URL(r.url()).pathname, body: r.postDataJSON() as Sent["body"] });
    // The build request is answered here (nothing is trained); the dataset check goes on to the real server.
    await page.route(
      (url) => url.pathname === "/v1/experiments",
      async (route) => {
        if (route.request().method() !== "POST") return route.continue();
        record(route.request());
        await route.fulfill({ status: 503, json: { error: { code: "unavailable", message: "recorded by the test, not built" } } });
      },
    );
    await page.route(
      (url) => url.pathname === "/v1/datasets/validate",
      async (route) => {
        record(route.request());
        await route.continue();
      },
    );
    await page.goto(`${server.url}/signin`);
    await page.getByLabel("Correo electrónico").fill(EMAIL);
    await page.getByLabel("Contraseña").fill(PASSWORD);
    await page.getByRole("button", { name: "Iniciar sesión" }).click();
    await page.getByRole("heading", { name: "Experimentos" }).waitFor();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const labels = () => page.getByTestId("label-cols");
  const data = () => page.getByTestId("data-cols");
  const tick = (group: () => ReturnType<Page["getByTestId"]>, name: string) => group().getByLabel(new RegExp(`^${name} `));
  const build = () => page.getByRole("button", { name: "Entrenar el modelo" }).click();
  const problems = () => page.getByTestId("form-problems");

  it("Spanish headers: column 2 is proposed as the label, the rest as inputs", async () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const rows = ["id_paciente,diagnóstico,edad,glucosa,imc"];
    for (let i = 0; i < 120; i++) {
      const glucosa = 70 + rand() * 100;
      rows.push(
        `P${i},${glucosa + rand() * 40 > 140 ? "maligno" : "benigno"},${30 + (i % 40)},${glucosa.toFixed(1)},${(18 + rand() * 15).toFixed(1)}`,
      );
    }
    const file = path.join(tmp, "cohorte.csv");
    fs.writeFileSync(file, rows.join("\n") + "\n");
    await page.getByRole("link", { name: "Nuevo experimento", exact: true }).first().click();
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    expect(await tick(labels, "diagnóstico").isChecked()).toBe(true);
    expect(await labels().getByRole("checkbox", { checked: true }).count()).toBe(1);
    for (const c of ["edad", "glucosa", "imc"]) expect(await tick(data, c).isChecked()).toBe(true);
  });

  it("a data column ticked as a label leaves the inputs: the check sends it in one role only", async () => {
    await tick(labels, "edad").check();
    expect(await tick(data, "edad").count()).toBe(0);
    await page.getByRole("button", { name: "Comprobar los datos" }).click();
    await page.getByTestId("dataset-report").waitFor({ timeout: 60_000 });
    expect(sent.at(-1)).toMatchObject({
      path: "/v1/datasets/validate",
      body: { label_cols: ["diagnóstico", "edad"], data_cols: ["glucosa", "imc"] },
    });
    // No longer a label: it is an input again, as it was; the report on the other columns goes (it blocked Build).
    await tick(labels, "edad").uncheck();
    expect(await tick(data, "edad").isChecked()).toBe(true);
    expect(await page.getByTestId("dataset-report").count()).toBe(0);
  });

  it("no label, or no input: refused on the page in Spanish, nothing sent", async () => {
    const before = sent.length;
    await tick(labels, "diagnóstico").uncheck();
    // diagnóstico is offered as an input now, unticked: never both.
    expect(await tick(data, "diagnóstico").isChecked()).toBe(false);
    await build();
    await problems().waitFor();
    expect(await problems().textContent()).toContain("Marque al menos una columna de etiqueta");
    await screenshot(page, "44-new-experiment-refused-es");

    await tick(labels, "diagnóstico").check();
    await problems().waitFor({ state: "detached" }); // checked again at each change once a send was refused
    for (const c of ["edad", "glucosa", "imc"]) await tick(data, c).uncheck();
    await build();
    await problems().waitFor();
    expect(await problems().textContent()).toContain("Marque al menos una columna de datos");
    expect(sent.length).toBe(before);
  });

  it("a fixed form is sent once, and no request the page sent had a column in two roles", async () => {
    await tick(data, "glucosa").check();
    await tick(data, "edad").check();
    await page.getByRole("button", { name: "Comprobar los datos" }).click();
    await page.getByText("Los datos han superado las comprobaciones.").waitFor({ timeout: 60_000 });
    await build();
    await page.getByText("recorded by the test, not built").waitFor();
    expect(sent.at(-1)).toMatchObject({ path: "/v1/experiments", body: { label_cols: ["diagnóstico"], data_cols: ["edad", "glucosa"] } });
    expect(sent.filter((s) => s.path === "/v1/experiments")).toHaveLength(1);
    for (const { body } of sent) {
      expect(body.label_cols.length).toBeGreaterThan(0);
      const roles = [...body.label_cols, ...(body.data_cols ?? []), body.images_col, body.split_col].filter(Boolean);
      expect(new Set(roles).size).toBe(roles.length);
    }
  });
});
