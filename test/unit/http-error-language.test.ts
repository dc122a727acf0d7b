import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors.js";
import { localizeError, preferredLanguage, spanishFromTemplate } from "../../src/http/error-language.js";
import { SPANISH_BY_CODE, SPANISH_TEMPLATES } from "../../src/http/error-messages-es.js";
import { errorBody } from "../../src/http/errors.js";
import { zodDetails } from "../../src/http/route.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}

/**
 * Every error code the server can answer with, as written in src/ (the literal beside a status in new ApiError,
 * refuse, errors.forbidden/conflict, a DatasetFault) and in docs/api-and-errors.md's table of codes.
 */
function codesInUse(): Set<string> {
  const codes = new Set<string>(["forbidden", "conflict"]);
  const patterns = [
    /new ApiError\(\s*[^,;]+?,\s*"([a-z_]+)"/g,
    /\brefuse\(\s*[^,;]+?,\s*"([a-z_]+)"/g,
    /errors\.(?:forbidden|conflict)\([^;]*?,\s*"([a-z_]+)"\s*\)/g,
    /new DatasetFault\(\s*"([a-z_]+)"/g,
    /\bfault\(\s*"([a-z_]+)"/g,
  ];
  for (const file of sourceFiles(path.join(ROOT, "src"))) {
    const text = fs.readFileSync(file, "utf8");
    for (const re of patterns) for (const m of text.matchAll(re)) codes.add(m[1]);
  }
  // The docs' table: "| 410 | `invitation_used` / `_expired` / `_revoked`, `reset_link_used` / ..." spelt out.
  const docs = fs.readFileSync(path.join(ROOT, "docs/api-and-errors.md"), "utf8");
  for (const line of docs.split("\n").filter((l) => /^\| \d{3} \|/.test(l))) {
    let stem = "";
    for (const m of line.split("|")[2].matchAll(/`([a-z_]+)`/g)) {
      const code = m[1].startsWith("_") ? stem + m[1] : m[1];
      if (!m[1].startsWith("_")) stem = m[1].replace(/_[a-z]+$/, "");
      codes.add(code);
    }
  }
  // admin.service.ts builds these: `${kind}_${state}`.
  for (const kind of ["invitation", "reset_link"])
    for (const state of ["invalid", "used", "expired", "revoked"]) codes.add(`${kind}_${state}`);
  return codes;
}

describe("API error messages in Spanish (Accept-Language)", () => {
  it("has Spanish for every error code the server can answer with", () => {
    const codes = codesInUse();
    expect(codes.size).toBeGreaterThan(60);
    const missing = [...codes].filter((c) => !SPANISH_BY_CODE[c]).sort();
    expect(missing, "add these codes to SPANISH_BY_CODE in src/http/error-messages-es.ts").toEqual([]);
  });

  it("picks the language by Accept-Language's order and q-values, English otherwise", () => {
    expect(preferredLanguage(undefined)).toBe("en");
    expect(preferredLanguage("")).toBe("en");
    expect(preferredLanguage("es")).toBe("es");
    expect(preferredLanguage("es-MX,es;q=0.9,en;q=0.8")).toBe("es");
    expect(preferredLanguage("en-US,en;q=0.9,es;q=0.8")).toBe("en");
    expect(preferredLanguage("fr-FR, es;q=0.5")).toBe("es");
    expect(preferredLanguage("en;q=0.2, es;q=0.7")).toBe("es");
    expect(preferredLanguage("de, fr")).toBe("en");
    expect(preferredLanguage("es;q=0")).toBe("en");
  });

  it("keeps code, type, status and field names; only the words change", () => {
    const e = new ApiError(401, "missing_api_key", "send your API key as Authorization: Bearer <key>");
    expect(errorBody(e, "es")).toEqual({
      error: { code: "missing_api_key", message: "envíe su clave de API como Authorization: Bearer <clave>", type: "authentication_error" },
    });
    expect(errorBody(e)).toEqual({ error: { code: "missing_api_key", message: e.message, type: "authentication_error" } });
    const bad = new ApiError(400, "invalid_request", "the current password is not correct", [
      { field: "current_password", message: "not correct" },
    ]);
    expect(localizeError(bad, "es")).toEqual({
      message: "la contraseña actual no es correcta",
      details: [{ field: "current_password", message: "no es correcta" }],
    });
  });

  it("fills a template's values and says an experiment's status in Spanish", () => {
    expect(spanishFromTemplate("experiment 12 not found")).toBe("no se encontró el experimento 12");
    expect(spanishFromTemplate("experiment 3 is already cancelled")).toBe("el experimento 3 ya está cancelado");
    expect(spanishFromTemplate("2 invalid fields: task, label_col")).toBe("2 campos no válidos: task, label_col");
  });

  it("a message no template knows: the code's Spanish sentence, then the English specifics", () => {
    const e = new ApiError(422, "zip_bomb", "the zip expands 900 times its size (limit 100); it looks like a zip bomb");
    expect(localizeError(e, "es").message).toBe(`${SPANISH_BY_CODE.zip_bomb} Detalle (en inglés): ${e.message}`);
    expect(localizeError(new ApiError(418, "no_such_code", "odd"), "es").message).toContain(SPANISH_BY_CODE.internal_error);
  });

  it("writes zod's own messages in Spanish and leaves a schema's own message to the templates", () => {
    const schema = z.object({ n: z.number().int(), tag: z.string().refine((v) => v === "x", "required") });
    const r = schema.safeParse({ n: "three", tag: "y" }, { reportInput: true });
    const details = zodDetails(r.error!, "");
    const body = errorBody(new ApiError(400, "invalid_request", "2 invalid fields: n, tag", details), "es");
    expect(body.error.message).toBe("2 campos no válidos: n, tag");
    expect(body.error.details).toEqual([
      {
        field: "n",
        code: "invalid_type",
        message: expect.stringMatching(/^Entrada inválida: se esperaba número, recibido (texto|string)/),
      },
      { field: "tag", code: "custom", message: "obligatorio" },
    ]);
    expect(errorBody(new ApiError(400, "invalid_request", "x", details)).error.details).toEqual(details);
  });

  it("every template's Spanish uses only the values its English captures", () => {
    for (const [en, es] of SPANISH_TEMPLATES) {
      const names = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const n of names(es)) expect(names(en), `${en} -> ${es}`).toContain(n);
    }
  });
});
