import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, Response, Router } from "express";
import { z } from "zod";
import type { AuthInfo, AuthMode, AuthRequest, AuthResponse, Authenticate } from "../auth/types.js";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { ApiError, detail as errorDetail, type ErrorDetail, msg, ruleIssueText, validationText } from "../errors.js";
import { requireAdmin } from "../auth/admin.service.js";
import { assertKeyScope, type KeyScope } from "../auth/key-scopes.js";
import { sendJson } from "./json-body.js";
import { createJsonBodyReader, DEFAULT_JSON_LIMITS, type JsonBodyLimits, type JsonBodyReader } from "./json-request-body.js";
import { rememberSpanish, zodSpanish } from "./error-language.js";

/**
 * What a plain route's handler may read of its request: the method and the headers. Express's req has these, and so
 * has the /predict lane's header view (predict-lane.ts); a handler that wanted more (req.ip, req.query) would not
 * compile, rather than work on Express and break on the lane.
 */
export type RouteRequest = AuthRequest;

export interface HandlerContext<P, Q, B> {
  req: Request;
  res: Response;
  params: P;
  query: Q;
  body: B;
  auth: AuthInfo;
  services: Services;
}

/** A plain route's handler context: no response to write to (it answers with its result) and the request's headers only. */
export interface PlainHandlerContext<P, Q, B> extends Omit<HandlerContext<P, Q, B>, "req" | "res"> {
  req: RouteRequest;
}

export interface HandlerResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What every route declares besides its handler. */
interface RouteSpec<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI-style path: /v1/experiments/{experiment_id}. */
  path: string;
  auth: AuthMode;
  /**
   * What an API key needs to call this route (src/auth/key-scopes.ts; sessions are not limited by it). Undeclared:
   * admin, so a route someone forgot stays closed to narrower keys (test/unit/route-scopes.test.ts requires every
   * route an API key can reach to declare it). The OpenAPI document carries it as x-builder-scope.
   */
  scope?: KeyScope;
  /** Administrators only (/v1/admin): anyone else gets 403 admin_only, before the body is read. */
  adminOnly?: boolean;
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
}

/** A route served by Express only: its handler gets Express's req and res (streams, SSE, req.ip, req.log). */
export interface ExpressRouteDef<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
> extends RouteSpec<P, Q, B> {
  plain?: false;
  handler: (ctx: HandlerContext<Out<P>, Out<Q>, Out<B>>) => Promise<HandlerResult | void>;
}

/**
 * A plain route: its handler reads only RouteRequest and answers with its result, so it runs the same on Express
 * and off it (the /predict lane, predict-lane.ts, serves only plain routes).
 */
export interface PlainRouteDef<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> extends RouteSpec<
  P,
  Q,
  B
> {
  plain: true;
  handler: (ctx: PlainHandlerContext<Out<P>, Out<Q>, Out<B>>) => Promise<HandlerResult>;
}

export type RouteDef<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> =
  ExpressRouteDef<P, Q, B> | PlainRouteDef<P, Q, B>;

export type AnyRoute = RouteDef<Schema | undefined, Schema | undefined, Schema | undefined>;
export type AnyPlainRoute = Extract<AnyRoute, { plain: true }>;

export function defineRoute<
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
>(def: RouteDef<P, Q, B>): AnyRoute {
  return def;
}

/** The scope an API key needs for the route: its own, or admin when it declares none (the safe default). */
export function routeScope(route: Pick<AnyRoute, "scope">): KeyScope {
  return route.scope ?? "admin";
}

/** Turns zod issues into one `details` entry per bad field. */
export function zodDetails(error: z.ZodError, prefix: string): ErrorDetail[] {
  return error.issues.map((issue) => {
    const field = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
    // A schema's own message comes from the catalog (invalid()); the edge says it in the caller's language.
    const own = validationText(issue.message) ?? ruleIssueText((issue as { params?: unknown }).params);
    if (own) return errorDetail(field, own, { code: issue.code });
    const detail = { field, message: issue.message, code: issue.code };
    // zod's own wording has a Spanish edition.
    const spanish = zodSpanish(issue, ZOD_EN.localeError, ZOD_ES.localeError);
    if (spanish) rememberSpanish(detail, spanish);
    return detail;
  });
}

const ZOD_EN = z.locales.en(),
  ZOD_ES = z.locales.es();

function parsePart(schema: Schema | undefined, value: unknown, prefix: string, details: ErrorDetail[]): unknown {
  if (!schema) return undefined;
  // reportInput: zod's messages say what was received ("expected number, received string"); the input is not sent back.
  const result = schema.safeParse(value ?? {}, { reportInput: true });
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
    throw new ApiError(
      400,
      "invalid_request",
      msg("request.invalid_fields", { count: details.length, fields: details.map((d) => d.field || "(body)").join(", ") }),
      details,
    );
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

/** One request as runRoute takes it, whoever received it (Express's mount below, or the /predict lane). */
export interface RouteIo<Req extends RouteRequest, Res extends AuthResponse> {
  /** The request as authentication and the handler read it: Express's req, or the lane's header view. */
  req: Req;
  /** Where authentication sets the rate-limit headers. */
  res: Res;
  /** node's request and response underneath (Express's extend them): the body is read from one, the answer written to the other. */
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  /** The path's parameters as matched, before the route's schema parses them. */
  params: unknown;
  /** The query, only for a route that declares one (undefined otherwise: Express parses req.query on every read). */
  query: unknown;
  log: () => Logger;
}

/** A route's runRoute: any request view for a plain route, Express's own req and res for the others. */
export type RunRoute<Req extends RouteRequest = RouteRequest, Res extends AuthResponse = AuthResponse> = (
  io: RouteIo<Req, Res>,
) => Promise<void>;

/**
 * The request pipeline of one route, framework-free: authenticate (and count the rate limit) from the headers
 * alone, only then read the JSON body, then validate params/query/body (every bad field in one 400), then call the
 * handler and send what it returns. Failures are thrown to the caller, which answers them (app.ts's error handler,
 * the lane's own). Reading the body after authentication means an unauthenticated request costs no body parsing
 * at all (issue 42: a 27 MB body held the event loop for 7 s before its 401). The body reader is made once here.
 */
export function routeRunner(route: AnyPlainRoute, services: Services, authenticate?: Authenticate): RunRoute;
export function routeRunner(route: AnyRoute, services: Services, authenticate?: Authenticate): RunRoute<Request, Response>;
export function routeRunner(
  route: AnyRoute,
  services: Services,
  authenticate: Authenticate = services.auth.authenticate,
): RunRoute<Request, Response> {
  const readBody = jsonBodyReaderFor(route, services.config);
  const scope = routeScope(route);
  return async function runRoute(io) {
    const auth = await authenticate(io.req, io.res, route.auth);
    // The one place a key's scope is checked, for Express and the /predict lane alike, before the body is read.
    if (auth) assertKeyScope(auth, scope);
    if (route.adminOnly) requireAdmin(auth);
    const parsedBody = readBody ? await readBody(io.incoming, io.outgoing, io.log) : undefined;
    const { params, query, body } = validateParts(route, io.params, io.query, parsedBody);
    const result = await route.handler({ req: io.req, res: io.res, params, query, body, auth: auth as AuthInfo, services });
    if (io.outgoing.headersSent || !result) return;
    sendResult(io.outgoing, result);
  };
}

function sendResult(res: ServerResponse, result: HandlerResult): void {
  if (result.headers) for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  res.statusCode = result.status ?? 200;
  if (result.body === undefined) res.end();
  else sendJson(res, result.body);
}

/** The route on Express: its pattern, and runRoute with Express's req and res; errors go to the global error handler. */
export function mountRoute(router: Router, route: AnyRoute, services: Services, authenticate: Authenticate): void {
  const runRoute = routeRunner(route, services, authenticate);
  router[route.method](expressPath(route.path), (req: Request, res: Response) =>
    runRoute({
      req,
      res,
      incoming: req,
      outgoing: res,
      params: req.params,
      query: route.query ? req.query : undefined,
      log: () => req.log,
    }),
  );
}
