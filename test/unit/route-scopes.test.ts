import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors.js";
import { assertKeyModel, assertKeyScope, keyScopeAllows, KEY_SCOPES, type KeyScope } from "../../src/auth/key-scopes.js";
import type { AuthInfo } from "../../src/auth/types.js";
import { routeScope } from "../../src/http/route.js";
import { buildOpenApi } from "../../src/http/openapi.js";
import { allRoutes } from "../../src/http/routes/index.js";
import { keyReachable, scopeTable, TEAMS_DOC, withTable } from "../../scripts/key-scopes-doc.js";

// Issue 50 item 3: every route an API key can reach says which scope it needs, so a new route cannot be forgotten
// open; the rule (src/auth/key-scopes.ts) is what route.ts applies after authentication.

const PREDICT_ROUTES = ["POST /predict", "POST /v1/experiments/{experiment_id}/predict"];
const line = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

describe("route scopes", () => {
  const routes = allRoutes();
  const reachable = keyReachable(routes);

  it("every route an API key can reach declares its scope", () => {
    expect(reachable.length).toBeGreaterThan(50);
    const undeclared = reachable.filter((r) => r.scope === undefined).map(line);
    expect(undeclared, "add `scope` to these routes' RouteSpec (src/auth/key-scopes.ts says which)").toEqual([]);
  });

  it("a route that declares none needs admin (the safe default)", () => {
    expect(routeScope({})).toBe("admin");
  });

  it("only the two /predict routes need predict; a write never needs only read (POST /v1/chat answers, it changes nothing)", () => {
    expect(
      reachable
        .filter((r) => r.scope === "predict")
        .map(line)
        .sort(),
    ).toEqual(PREDICT_ROUTES);
    const writesForReaders = reachable.filter((r) => r.method !== "get" && r.scope === "read").map(line);
    expect(writesForReaders).toEqual(["POST /v1/chat"]);
    const adminReads = reachable.filter((r) => r.method === "get" && r.scope !== "read").map(line);
    expect(
      adminReads.every((l) => l.startsWith("GET /v1/admin/")),
      adminReads.join(", "),
    ).toBe(true);
    expect(reachable.filter((r) => r.path.startsWith("/v1/admin/")).every((r) => r.scope === "admin")).toBe(true);
    expect(reachable.find((r) => line(r) === "DELETE /v1/me")?.scope).toBe("admin");
  });

  it("the key routes stay session-only: no key, whatever its scopes, makes or revokes keys", () => {
    const keyRoutes = routes.filter((r) => r.path.startsWith("/v1/api-keys"));
    expect(keyRoutes.length).toBe(3);
    expect(keyRoutes.every((r) => r.auth === "session")).toBe(true);
  });

  it("the OpenAPI document carries each reachable route's scope as x-builder-scope", () => {
    const doc = buildOpenApi(routes, "test") as { paths: Record<string, Record<string, Record<string, unknown>>> };
    for (const r of routes) {
      const op = doc.paths[r.path][r.method];
      expect(op["x-builder-scope"], line(r)).toBe(reachable.includes(r) ? routeScope(r) : undefined);
    }
  });

  it("docs/teams.md's table is the one the routes give (npx tsx scripts/key-scopes-doc.ts)", () => {
    const doc = fs.readFileSync(TEAMS_DOC, "utf8");
    expect(withTable(doc, scopeTable(routes))).toBe(doc);
  });
});

describe("the scope rule", () => {
  const key = (keyScopes: KeyScope[] | null, keyModelIds: string[] | null = null): AuthInfo => ({
    userId: "u",
    email: "e@x",
    role: "member",
    via: "api_key",
    workspace: { id: "w", role: "owner", personal: true, storagePrefix: "u" },
    keyScopes,
    keyModelIds,
  });
  const refusal = (f: () => void) => {
    try {
      f();
    } catch (err) {
      return err instanceof ApiError ? { status: err.status, code: err.code, message: err.message } : err;
    }
    return null;
  };

  it("read < build < admin; predict apart; NULL (a key made before scopes) opens everything", () => {
    const table = Object.fromEntries(
      KEY_SCOPES.map((held) => [held, KEY_SCOPES.filter((needed) => keyScopeAllows([held], needed)).join(",")]),
    );
    expect(table).toEqual({ predict: "predict", read: "read", build: "read,build", admin: "read,build,admin" });
    expect(KEY_SCOPES.every((s) => keyScopeAllows(null, s) && keyScopeAllows(undefined, s))).toBe(true);
    expect(keyScopeAllows([], "read")).toBe(false);
  });

  it("refuses a key beyond its scope with 403 api_key_scope_missing naming the scope; sessions pass", () => {
    expect(refusal(() => assertKeyScope(key(["predict"]), "read"))).toMatchObject({
      status: 403,
      code: "api_key_scope_missing",
      message: expect.stringContaining("scope read"),
    });
    expect(refusal(() => assertKeyScope(key(["read"]), "build"))).toMatchObject({ code: "api_key_scope_missing" });
    expect(refusal(() => assertKeyScope(key(["predict", "read"]), "read"))).toBeNull();
    expect(refusal(() => assertKeyScope({ ...key(["predict"]), via: "session" }, "admin"))).toBeNull();
  });

  it("a key limited to models refuses another with 403 api_key_model_not_allowed", () => {
    expect(refusal(() => assertKeyModel(key(["predict"], ["3"]), 4))).toMatchObject({ status: 403, code: "api_key_model_not_allowed" });
    expect(refusal(() => assertKeyModel(key(["predict"], ["3"]), 3))).toBeNull();
    expect(refusal(() => assertKeyModel(key(["predict"]), 4))).toBeNull();
  });
});
