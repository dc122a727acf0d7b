import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { ApiError, detail, msg } from "../../src/errors.js";
import { codeSentence, localizeError, preferredLanguage } from "../../src/http/error-language.js";
import { errorBody, toApiError } from "../../src/http/errors.js";
import { zodDetails } from "../../src/http/route.js";
import { hasKey, readCatalog, translate } from "../../src/i18n/index.js";
import { experimentRequestSchema } from "../../src/experiments/request.js";
import { monitoringAlertRoutes } from "../../src/http/routes/monitoring-alerts.js";
import { chatRoutes } from "../../src/http/routes/chat.js";
import { ModelNotPublished } from "../../src/serving/errors.js";

// API errors in the caller's language (Accept-Language), said at the edge from the one catalog
// (locales/<lng>/errors.json): an error carries a key and its values, never an English sentence to parse back.

const ROOT = path.resolve(import.meta.dirname, "../..");

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}

/**
 * Every error code the server can answer with, as written in src/ (the literal beside a status in new ApiError,
 * refuse, errors.forbidden/conflict, a DatasetFault, a DicomError, a `code:` of a refusal) and in
 * docs/api-and-errors.md's table of codes.
 */
function codesInUse(): Set<string> {
  const codes = new Set<string>(["forbidden", "conflict"]);
  const patterns = [
    /new ApiError\(\s*[^,;]+?,\s*"([a-z_]+)"/g,
    /\brefuse\(\s*[^,;]+?,\s*"([a-z_]+)"/g,
    /errors\.(?:forbidden|conflict)\([^;]*?,\s*"([a-z_]+)"\s*\)/g,
    /new DatasetFault\(\s*"([a-z_]+)"/g,
    /\bfault\(\s*"([a-z_]+)"/g,
    /new DicomError\(\s*"([a-z_]+)"/g,
    /\bcode: "([a-z_]+)",\s*\n\s*text:/g,
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

const STATUS_BY_CODE_PREFIX = (code: string) => (code.startsWith("invalid") || code.startsWith("missing") ? 400 : 409);

describe("API error messages by Accept-Language, from the catalog", () => {
  const codes = codesInUse();

  it("finds the codes (guards the checks below against an empty scan)", () => {
    expect(codes.size).toBeGreaterThan(100);
    for (const c of ["missing_api_key", "invalid_api_key", "api_key_revoked", "rate_limit_exceeded", "retrospective_study", "zip_bomb"])
      expect(codes).toContain(c);
  });

  it("has a sentence for every error code the server can answer with, in English and Spanish", () => {
    const missing = [...codes].filter((c) => !hasKey("en", `errors:code.${c}`) || !hasKey("es", `errors:code.${c}`)).sort();
    expect(missing, "add these codes to code.* in locales/{en,es}/errors.json").toEqual([]);
  });

  it("answers every error code in Spanish with Accept-Language: es, without an English detail", () => {
    for (const code of codes) {
      // An error that lost its catalog words (one that crossed a process as text) is the worst case: its code's sentence.
      const bare = new ApiError(STATUS_BY_CODE_PREFIX(code), code, "the English words of this error");
      const message = errorBody(bare, "es").error.message;
      expect(message, code).toBe(codeSentence(code, "es"));
      expect(message, code).not.toContain("English");
      expect(message, code).not.toMatch(/Detalle \(en inglés\)/);
      expect(message, code).not.toBe(codeSentence(code, "en"));
    }
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
    const e = new ApiError(401, "missing_api_key", msg("auth.missing_api_key"));
    expect(errorBody(e, "es")).toEqual({
      error: { code: "missing_api_key", message: "envíe su clave de API como Authorization: Bearer <clave>", type: "authentication_error" },
    });
    expect(errorBody(e)).toEqual({
      error: { code: "missing_api_key", message: "send your API key as Authorization: Bearer <key>", type: "authentication_error" },
    });
    const bad = new ApiError(400, "invalid_request", msg("auth.wrong_current_password"), [
      detail("current_password", msg("detail.not_correct")),
    ]);
    expect(localizeError(bad, "es")).toEqual({
      message: "la contraseña actual no es correcta",
      details: [{ field: "current_password", message: "no es correcta" }],
    });
    expect(localizeError(bad, "en").details).toEqual([{ field: "current_password", message: "not correct" }]);
  });

  it("fills the values, says an experiment's status in Spanish, and picks the plural form", () => {
    const say = (e: ApiError) => localizeError(e, "es").message;
    expect(say(new ApiError(404, "not_found", msg("experiment.not_found", { id: 12 })))).toBe("no se encontró el experimento 12");
    expect(say(new ApiError(409, "experiment_finished", msg("experiment.already_finished", { id: 3, status: "cancelled" })))).toBe(
      "el experimento 3 ya está cancelado",
    );
    const fields = (count: number, f: string) => new ApiError(400, "invalid_request", msg("request.invalid_fields", { count, fields: f }));
    expect(say(fields(2, "task, label_col"))).toBe("2 campos no válidos: task, label_col");
    expect(say(fields(1, "task"))).toBe("1 campo no válido: task");
    expect(fields(1, "task").message).toBe("1 invalid field: task");
  });

  it("says a message nested in another in the same language", () => {
    const problem = msg("pacs.url_not_http");
    const e = new ApiError(400, "invalid_request", msg("request.field_problem", { field: "dicomweb_url", problem }), [
      detail("dicomweb_url", problem),
    ]);
    expect(e.message).toBe("dicomweb_url: must be an http:// or https:// URL");
    expect(localizeError(e, "es")).toEqual({
      message: "dicomweb_url: debe ser una dirección http:// o https://",
      details: [{ field: "dicomweb_url", message: "debe ser una dirección http:// o https://" }],
    });
  });

  it("maps a model that is not published, in Spanish, status word included", () => {
    const e = toApiError(new ModelNotPublished(7, "training"));
    expect(e.code).toBe("model_not_ready");
    expect(errorBody(e, "es").error).toMatchObject({
      message: "el experimento 7 aún no tiene un modelo publicado: está entrenando; vuelva a intentarlo cuando esté listo",
      details: [{ field: "experiment_id", message: "el experimento está entrenando", status: "training" }],
    });
  });

  it("writes zod's own messages in Spanish", () => {
    const schema = z.object({ n: z.number().int() });
    const r = schema.safeParse({ n: "three" }, { reportInput: true });
    const details = zodDetails(r.error!, "");
    const body = errorBody(new ApiError(400, "invalid_request", msg("request.invalid_fields", { count: 1, fields: "n" }), details), "es");
    expect(body.error.message).toBe("1 campo no válido: n");
    expect(body.error.details).toEqual([
      {
        field: "n",
        code: "invalid_type",
        message: expect.stringMatching(/^Entrada inválida: se esperaba número, recibido (texto|string)/),
      },
    ]);
  });

  it("writes a route schema's own messages in Spanish: the alert routes' and the chat's (issue 53)", () => {
    const bodyOf = (routes: readonly unknown[], method: string, pathEnd: string) => {
      const r = (routes as Array<{ method: string; path: string; body?: z.ZodType }>).find(
        (x) => x.method === method && x.path.endsWith(pathEnd),
      );
      return r!.body!;
    };
    const spanish = (schema: z.ZodType, value: unknown) => {
      const r = schema.safeParse(value, { reportInput: true });
      const details = zodDetails(r.error!, "");
      return errorBody(new ApiError(400, "invalid_request", msg("request.invalid_fields", { count: 1, fields: "x" }), details), "es").error
        .details as Array<{ field: string; message: string }>;
    };
    const resolve = bodyOf(monitoringAlertRoutes, "post", "/resolve");
    expect(spanish(resolve, { comment: "  " })).toEqual([
      expect.objectContaining({ field: "comment", message: "diga qué se encontró o qué se hizo" }),
    ]);
    expect(spanish(resolve, { comment: "x".repeat(2001) })).toEqual([
      expect.objectContaining({ field: "comment", message: "como máximo 2000 caracteres" }),
    ]);
    const settings = bodyOf(monitoringAlertRoutes, "put", "/alert-rules");
    expect(spanish(settings, { email_to: ["not-an-address"] })).toEqual([
      expect.objectContaining({ field: "email_to.0", message: "debe ser una dirección de correo electrónico" }),
    ]);
    const chat = bodyOf(chatRoutes, "post", "/chat");
    expect(spanish(chat, { message: "x".repeat(8001) })).toEqual([
      expect.objectContaining({ field: "message", message: "debe tener como máximo 8000 caracteres" }),
    ]);
    // English is unchanged: the schema keeps the catalog's English in the issue.
    expect(zodDetails(chat.safeParse({ message: " " }).error!, "")[0].message).toBe("must not be empty or only spaces");
  });

  it("says the experiment request's rules in Spanish: a field's own message, a cross-field rule naming a column, a bucket path's reason", () => {
    const valid = {
      zip_gcloud: "u1/data.zip",
      label_cols: ["diagnosis"],
      data_cols: ["radius_mean"],
      model_type: 0,
      optimization_type: 1,
      experiment_id: 1,
      user_id: "u1",
      study_type: "Builder",
      task: "data",
      optimization_metric: "AUC",
    };
    const said = (value: unknown, lng: "en" | "es") => {
      const r = experimentRequestSchema.safeParse(value, { reportInput: true });
      const details = zodDetails(r.error!, "");
      return (
        errorBody(new ApiError(400, "invalid_request", msg("request.invalid_fields", { count: 1, fields: "x" }), details), lng).error
          .details as Array<{ field: string; message: string }>
      ).map((d) => `${d.field}: ${d.message}`);
    };
    const bad = { ...valid, experiment_id: -1, zip_gcloud: "u1//data.zip", dicom_frames: "some" };
    expect(said(bad, "en")).toEqual([
      `zip_gcloud: not a bucket path: ${translate("en", "errors:path.empty_segment")}`,
      "experiment_id: must be a positive integer",
      'dicom_frames: must be "first" or "all"',
    ]);
    expect(said(bad, "es")).toEqual([
      `zip_gcloud: no es una ruta del bucket: ${translate("es", "errors:path.empty_segment")}`,
      "experiment_id: debe ser un número entero positivo",
      'dicom_frames: debe ser "first" o "all"',
    ]);
    // Cross-field rules run once every field parses.
    const twoRoles = { ...valid, label_cols: ["diagnosis", "radius_mean"] };
    expect(said(twoRoles, "en")).toEqual(["data_cols: 'radius_mean' is both a label and a data column"]);
    expect(said(twoRoles, "es")).toEqual(["data_cols: 'radius_mean' es a la vez una etiqueta y una columna de datos"]);
  });

  it('has no route schema message written as an English literal (each is invalid("validation.…"))', () => {
    const literal = [
      /\.(?:min|max|length|int|positive|nonnegative|regex|refine|email|url|uuid|datetime|number|string)\((?:[^()"`]*,\s*)?["'`][^"'`]*\s[^"'`]*["'`]\s*\)/,
      /\berror:\s*["'`]/,
      /z\.enum\(\[[^\]]*\],\s*["'`]/,
    ];
    const offending = (text: string) => text.split("\n").filter((line) => literal.some((re) => re.test(line)));
    // The scan finds a planted one, so an empty answer means something.
    expect(
      offending(
        '  comment: z.string().min(1, "say what was found"),\n  x: z.enum(["a"], { error: "must be a" }),\n  id: z.uuid("must be an id"),',
      ),
    ).toHaveLength(3);
    const found = sourceFiles(path.join(ROOT, "src/http")).flatMap((f) =>
      offending(fs.readFileSync(f, "utf8")).map((line) => `${path.relative(ROOT, f)}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });

  it("has no Spanish catalog text left in English (each says something different, or only its values)", () => {
    const catalog = readCatalog();
    const flat = (o: unknown, prefix = ""): Array<[string, string]> =>
      Object.entries(o as Record<string, unknown>).flatMap(([k, v]) =>
        v && typeof v === "object" ? flat(v, `${prefix}${k}.`) : [[`${prefix}${k}`, String(v)] as [string, string]],
      );
    const es = new Map(flat(catalog.es.errors));
    // Words that are the same in both languages, each checked by hand.
    const sameWord = new Set(["workspace.role_name.editor"]);
    const same = flat(catalog.en.errors)
      .filter(
        ([k, en]) =>
          !k.startsWith("status.") && !sameWord.has(k) && es.get(k) === en && /[a-z]{3,}/i.test(en.replace(/\{\{[^}]*\}\}/g, "")),
      )
      .map(([k]) => k);
    expect(same).toEqual([]);
  });
});
