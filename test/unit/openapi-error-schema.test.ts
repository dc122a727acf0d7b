import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { detail, errors, msg } from "../../src/errors.js";
import { errorBody } from "../../src/http/errors.js";
import { buildOpenApi } from "../../src/http/openapi.js";
import { allRoutes } from "../../src/http/routes/index.js";
import { PermissionDeniedError } from "../../src/workspaces/permissions.js";

// The documented error body must accept every shape the edge sends: a 400's list of bad fields and a 403's facts of
// a refusal (its permission and role). CI's Schemathesis run once found a 403 whose details broke the schema; this
// checks both shapes on every run instead of waiting for the fuzzer to draw a reviewer.
describe("OpenAPI error schema", () => {
  const doc = buildOpenApi(allRoutes(), "test") as { components: { schemas: { Error: object } } };
  const validate = new Ajv2020({ strict: false }).compile(doc.components.schemas.Error);

  it.each([
    ["a refusal of a role (403)", new PermissionDeniedError("workspace.settings", "reviewer")],
    [
      "bad fields (400)",
      errors.invalidRequest(msg("request.invalid_fields", { count: 1, fields: "label_cols" }), [detail("label_cols", msg("internal"))]),
    ],
    ["no details (404)", errors.notFound(msg("internal"))],
  ])("accepts %s, in English and Spanish", (_what, error) => {
    for (const lang of ["en", "es"] as const) {
      const body = errorBody(error, lang);
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it("rejects a body without its code (the schema is not a blank check)", () => {
    expect(validate({ error: { message: "x", type: "y" } })).toBe(false);
    expect(validate({ error: { code: "c", message: "x", type: "y", details: "text" } })).toBe(false);
  });
});
