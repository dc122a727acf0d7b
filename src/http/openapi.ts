import { z } from "zod";
import { routeScope, type AnyRoute } from "./route.js";

const errorBody = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message", "type"],
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        type: { type: "string" },
        // One entry per bad field for a 400; the facts of a refusal (a 403's permission and role) as one object.
        details: {
          anyOf: [
            { type: "array", items: { type: "object" } },
            { type: "object", additionalProperties: true },
          ],
        },
      },
    },
  },
};

function jsonSchema(schema: z.ZodType, io: "input" | "output" = "input"): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function parameters(route: AnyRoute) {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ["path", route.params],
    ["query", route.query],
  ] as const) {
    if (!schema) continue;
    const js = jsonSchema(schema) as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, s] of Object.entries(js.properties ?? {})) {
      out.push({ name, in: where, required: where === "path" || (js.required ?? []).includes(name), schema: s });
    }
  }
  return out;
}

/** OpenAPI 3.1 generated from the same zod schemas the routes validate with. */
export function buildOpenApi(routes: AnyRoute[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const responses: Record<string, unknown> = {};
    const errorSchema = route.errorSchema ? jsonSchema(route.errorSchema, "output") : { $ref: "#/components/schemas/Error" };
    for (const [status, r] of Object.entries(route.responses ?? { 200: { description: "OK" } })) {
      // A documented failure without its own schema has the route's error body.
      const schema = r.schema ? jsonSchema(r.schema, "output") : Number(status) >= 400 ? errorSchema : undefined;
      responses[status] = {
        description: r.description,
        ...(schema ? { content: { [r.contentType ?? "application/json"]: { schema } } } : {}),
      };
    }
    responses.default = { description: "Error", content: { "application/json": { schema: errorSchema } } };
    const op: Record<string, unknown> = {
      summary: route.summary,
      tags: route.tags ?? [],
      operationId: `${route.method}_${route.path.replace(/[^a-zA-Z0-9]+/g, "_").replace(/^_|_$/g, "")}`,
      parameters: parameters(route),
      responses,
    };
    if (route.auth === "api_key") op.security = [{ bearer: [] }];
    else if (route.auth === "session") op.security = [{ session: [] }];
    else if (route.auth === "any") op.security = [{ bearer: [] }, { session: [] }];
    else op.security = [];
    // The scope an API key needs (src/auth/key-scopes.ts); only where a key can call the route at all.
    if (route.auth === "api_key" || route.auth === "any") op["x-builder-scope"] = routeScope(route);
    if (route.body) op.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(route.body) } } };
    if (route.rawBody) {
      op.requestBody = {
        required: true,
        description: route.rawBody.description,
        content: { [route.rawBody.contentType]: { schema: { type: "string", format: "binary" } } },
      };
    }
    (paths[route.path] ??= {})[route.method] = op;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Builder API",
      version,
      description:
        "Builder turns a zipped CSV and its images (or a table of clinical variables) into an evaluated, explained model behind a prediction API.",
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An API key from the dashboard (Settings → API) or `./builder keys create`.",
        },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "builder_session",
          description: "Dashboard session; unsafe methods also need the x-csrf-token header.",
        },
      },
      schemas: { Error: errorBody },
    },
    paths,
  };
}
