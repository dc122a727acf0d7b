import type { Request, Response, Router } from "express";
import { z } from "zod";
import type { AuthInfo, AuthMode, Authenticate } from "../auth/types.js";
import type { Config } from "../config.js";
import type { Services } from "../services.js";
import { ApiError, type ErrorDetail } from "../errors.js";
import { sendJson } from "./json-body.js";
import { createJsonBodyReader, DEFAULT_JSON_LIMITS, type JsonBodyLimits, type JsonBodyReader } from "./json-request-body.js";

export interface HandlerContext<P, Q, B> {
  req: Request;
  res: Response;
  params: P;
  query: Q;
  body: B;
  auth: AuthInfo;
  services: Services;
}

export interface HandlerResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteDef<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI-style path: /v1/experiments/{experiment_id}. */
  path: string;
  auth: AuthMode;
  summary: string;
  tags?: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** Raw-body routes (uploads, SSE) skip the JSON body; documented as this content type. */
  rawBody?: { contentType: string; description: string };
  /** The JSON body's limits when they are not DEFAULT_JSON_LIMITS (1 MB): the /predict routes carry images. */
  jsonBody?: (config: Config) => JsonBodyLimits;
  responses?: Record<number, { description: string; schema?: Schema; contentType?: string }>;
  /** The body of this route's failures when it is not the common Error (the /predict routes speak the seed's contract). */
  errorSchema?: Schema;
  /**
   * Mounted before the other routes (their order among themselves kept): Express tries every route's pattern in
   * mounting order, so the hot path (/predict) skips the ~40 patterns listed before it. Only for routes whose
   * method and path no other route can match.
   */
  mountFirst?: boolean;
  handler: (ctx: HandlerContext<Out<P>, Out<Q>, Out<B>>) => Promise<HandlerResult | void>;
}

export type AnyRoute = RouteDef<Schema | undefined, Schema | undefined, Schema | undefined>;

export function defineRoute<P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
  def: RouteDef<P, Q, B>,
): AnyRoute {
  return def;
}

/** Turns zod issues into one `details` entry per bad field. */
export function zodDetails(error: z.ZodError, prefix: string): ErrorDetail[] {
  return error.issues.map((issue) => ({
    field: [prefix, ...issue.path.map(String)].filter(Boolean).join("."),
    message: issue.message,
    code: issue.code,
  }));
}

function parsePart(schema: Schema | undefined, value: unknown, prefix: string, details: ErrorDetail[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  details.push(...zodDetails(result.error, prefix));
  return undefined;
}

/** The route's params, query and body parsed by its schemas, or one 400 naming every bad field. */
export function validateParts(route: AnyRoute, rawParams: unknown, rawQuery: unknown, rawBody: unknown) {
  const details: ErrorDetail[] = [];
  const params = parsePart(route.params, rawParams, "", details);
  const query = route.query ? parsePart(route.query, rawQuery, "", details) : undefined;
  const body = route.rawBody ? undefined : parsePart(route.body, rawBody, "", details);
  if (details.length) {
    throw new ApiError(400, "invalid_request", `${details.length} invalid field${details.length > 1 ? "s" : ""}: ${details.map((d) => d.field || "(body)").join(", ")}`, details);
  }
  return { params, query, body };
}

export function expressPath(openapiPath: string): string {
  return openapiPath.replace(/\{([^}]+)\}/g, ":$1");
}

/** The route's JSON body reader; none for raw-body routes (uploads), whose handlers read the stream themselves. */
export function jsonBodyReaderFor(route: AnyRoute, config: Config): JsonBodyReader | undefined {
  return route.rawBody ? undefined : createJsonBodyReader(route.jsonBody?.(config) ?? DEFAULT_JSON_LIMITS);
}

/**
 * The route builder: authenticate (and count the rate limit) from the headers alone, only then read the JSON
 * body, then validate params/query/body (every bad field in one 400), then call the handler and send what it
 * returns. Errors go to the global error handler. Reading the body after authentication means an
 * unauthenticated request costs no body parsing at all (issue 42: a 27 MB body held the event loop for 7 s
 * before its 401).
 */
export function mountRoute(router: Router, route: AnyRoute, services: Services, authenticate: Authenticate): void {
  const readBody = jsonBodyReaderFor(route, services.config);
  router[route.method](expressPath(route.path), async (req: Request, res: Response) => {
    const auth = await authenticate(req, res, route.auth);
    const parsedBody = readBody ? await readBody(req, res, () => req.log) : undefined;
    // Express 5 parses req.query on every read: read only where the route declares a query.
    const { params, query, body } = validateParts(route, req.params, route.query ? req.query : undefined, parsedBody);
    const result = await route.handler({ req, res, params, query, body, auth: auth as AuthInfo, services });
    if (res.headersSent || !result) return;
    if (result.headers) res.set(result.headers);
    res.status(result.status ?? 200);
    if (result.body === undefined) res.end();
    else sendJson(res, result.body);
  });
}
