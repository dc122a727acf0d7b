import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syntheticRandomLabelCsv } from "../integration/experiments-fixtures.js";
import { makeZip } from "../helpers/zips.js";
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

// Issue 39 item 5 in a real Chromium against a real Builder and the real Python pipeline: the dashboard starts in
// the browser's language (English here), the Account page switches it to Spanish, and the navigation, the
// new-experiment form, the result page and Settings → API then read in Spanish, API errors included (the dashboard
// sends Accept-Language); the choice survives a reload, and switching back gives English again.

const EMAIL = "clinica@hospital.example";
const PASSWORD = "una contraseña bastante larga";

/** Buttons and button-like links whose text does not fit their box (a longer Spanish label overflowing). */
async function overflowingButtons(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("button, a.button")]
      .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
      .map((el) => el.textContent ?? ""),
  );
}

describe.skipIf(!haveChromium)("dashboard in Spanish (Chromium)", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let tmp: string;

  beforeAll(async () => {
    ensureDashboardBuilt();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "builder-spanish-"));
    server = await startTestServer("pglite");
    await server.services.auth.users.create({ email: EMAIL, password: PASSWORD });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.teardown();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("starts in the browser's language: English for an English Chromium", async () => {
    await signInThroughPage(page, server.url, EMAIL, PASSWORD);
    const language = await page.evaluate(() => navigator.language);
    expect(language).toMatch(/^en\b/);
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("en");
    await expect(page.getByRole("navigation", { name: "Main" }).textContent()).resolves.toContain("New experiment");
  });

  it("the Account page switches to Spanish: navigation and <html lang> follow at once, and a reload keeps it", async () => {
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByTestId("language").selectOption("es");
    await page.getByRole("heading", { name: "Ajustes → Cuenta" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("es");
    const nav = page.getByRole("navigation", { name: "Principal" });
    expect(await nav.getByRole("link").allTextContents()).toEqual([
      "Experimentos",
      "Nuevo experimento",
      "Ajustes → API",
      "Miembros",
      "Cuenta",
      "PACS", // a proper name, the same in both languages
      "Actividad",
    ]);
    await expect(page.getByRole("button", { name: "Cerrar sesión" }).isVisible()).resolves.toBe(true);
    await page.reload();
    await page.getByRole("heading", { name: "Ajustes → Cuenta" }).waitFor();
    expect(await page.title()).toBe("Cuenta · Builder");

    // An API error in Spanish: the dashboard sends Accept-Language, the server answers in it (code unchanged).
    await page.getByLabel("Contraseña actual").fill("not the password at all");
    await page.getByLabel("Nueva contraseña (al menos 12 caracteres)").fill("another long password");
    await page.getByLabel("Nueva contraseña (otra vez)").fill("another long password");
    await page.getByRole("button", { name: "Cambiar la contraseña" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("Error: la contraseña actual no es correcta");
    expect(await alert.textContent()).toContain("invalid_request");
    await screenshot(page, "39-es-account");
    expect(await overflowingButtons(page)).toEqual([]);
  });

  it("the new-experiment form and the result page are in Spanish, numbers with a decimal comma", async () => {
    const { csv } = syntheticRandomLabelCsv();
    const file = path.join(tmp, "aleatorio.zip");
    fs.writeFileSync(file, makeZip({ "data.csv": csv }));
    await page.getByRole("link", { name: "Nuevo experimento", exact: true }).first().click();
    await page.getByRole("heading", { name: "Nuevo experimento" }).waitFor();
    expect(await page.getByRole("heading", { level: 2 }).first().textContent()).toBe("1. Suba el conjunto de datos");
    await page.getByTestId("zip-input").setInputFiles(file);
    await page.getByTestId("uploaded").waitFor({ timeout: 30_000 });
    const form = page.getByRole("form", { name: "Ajustes del experimento" });
    await form.waitFor();
    for (const heading of ["2. Elija las columnas", "3. Ajustes"]) await form.getByRole("heading", { name: heading }).waitFor();
    for (const label of ["Tarea", "Tipo de experimento", "Tipo de modelo", "Métrica de optimización", "ID del experimento"])
      // A select's or an input's accessible name starts with its label's text (the select's own value follows it).
      await form
        .getByLabel(new RegExp(`^${label}`))
        .first()
        .waitFor();
    expect(await page.getByTestId("positive-class").locator("option").first().textContent()).toMatch(/^[BM] \(\d+ filas/);
    await expect(form.getByRole("button", { name: "Comprobar los datos" }).isVisible()).resolves.toBe(true);
    await screenshot(page, "39-es-new-experiment");
    expect(await overflowingButtons(page)).toEqual([]);

    await page.getByTestId("budget").fill("4");
    await page.getByRole("button", { name: "Entrenar el modelo" }).click();
    const ended = page.locator(
      '[data-testid="experiment"]:is([data-status="ready"], [data-status="failed"], [data-status="invalid_dataset"])',
    );
    await ended.waitFor({ timeout: 150_000 });
    expect(await ended.getAttribute("data-status")).toBe("ready");

    await page.getByRole("heading", { name: "Resultados en el conjunto de prueba" }).waitFor();
    // Random labels: the server's warning, its title said in Spanish by its code.
    expect(await page.getByTestId("result-badge").textContent()).toBe("listo — no mejor que el azar");
    expect(await page.getByTestId("verdict").getByRole("heading").textContent()).toMatch(/^Valoración: /);
    expect(await page.getByTestId("positive-class").textContent()).toMatch(/^Clase positiva: [BM]/);
    const metrics = await page.getByTestId("metrics").textContent();
    expect(metrics).toContain("Métricas de prueba (intervalo del 95 %)");
    expect(metrics).toMatch(/Sensibilidad para [BM][01],\d{3} \(/); // a decimal comma, as Spanish writes it
    expect(metrics).not.toMatch(/[01]\.\d{3}/);
    expect(await page.getByTestId("confusion-matrix").locator("thead th").first().textContent()).toBe("Clase real ↓ · predicha →");
    for (const name of ["Probarlo", "Descargar ONNX", "Probar con datos nuevos", "Descargar el informe"])
      await expect(page.getByRole("link", { name }).isVisible()).resolves.toBe(true);
    await page.getByRole("heading", { name: "Punto de corte" }).waitFor();
    await page.getByRole("heading", { name: "Historial" }).waitFor();
    await screenshot(page, "39-es-result");
    expect(await overflowingButtons(page)).toEqual([]);
    expect(seriousOrCritical(await axeViolations(page))).toEqual([]);
  }, 200_000);

  it("Settings → API is in Spanish, and switching back gives English again", async () => {
    await page.getByRole("link", { name: "Ajustes → API" }).click();
    await page.getByRole("heading", { name: "Ajustes → API" }).waitFor();
    await page.getByLabel("Nombre").fill("cuaderno-radiologia");
    await page.getByRole("button", { name: "Generar una clave nueva" }).click();
    await page.getByTestId("new-key").getByText("Cópiela ahora: solo se muestra una vez.").waitFor();
    await expect(page.getByRole("button", { name: "Copiar la clave" }).isVisible()).resolves.toBe(true);
    expect(await page.getByTestId("keys").locator("thead th").allTextContents()).toEqual([
      "Nombre / Prefijo",
      "Permisos",
      "Modelos",
      "Creada",
      "Último uso",
      "Caduca",
      "Límite / min",
      "Estado",
    ]);
    expect(await page.getByTestId("keys").locator("tbody td").nth(4).textContent()).toBe("nunca");
    await screenshot(page, "39-es-settings-api");
    expect(await overflowingButtons(page)).toEqual([]);

    await page.getByRole("link", { name: "Cuenta" }).click();
    await page.getByTestId("language").selectOption("en");
    await page.getByRole("heading", { name: "Settings → Account" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("en");
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link").first().textContent()).toBe("Experiments");
    await page.getByRole("link", { name: "Settings → API" }).click();
    await page.getByRole("heading", { name: "Settings → API" }).waitFor();
    await page.getByRole("button", { name: "Generate new key" }).waitFor();
  });
});
