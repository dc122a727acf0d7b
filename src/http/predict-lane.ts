import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, Response } from "express";
import type { AuthInfo } from "../auth/types.js";
import type { Services } from "../services.js";
import { requestContext } from "../process-guard.js";
import { observeRequest, predictErrorBody, requestId } from "./app.js";
import { toApiError } from "./errors.js";
import { sendJson } from "./json-body.js";
import type { JsonBodyReader } from "./json-request-body.js";
import { expressPath, jsonBodyReaderFor, validateParts, type AnyRoute } from "./route.js";

/**
 * The two /predict routes served on node:http directly, before Express sees the request. Why: Express gives every
 * request its own req/res prototypes (Object.setPrototypeOf), which makes each later property access on them slow;
 * on this 2-core machine a bare node:http handler answered a tiny prediction at 31-35k req/s, the same with
 * Express's prototypes set 11k, an Express route 7k, while Builder's whole stack did ~3.5k
 * (bench/serve/express-overhead.ts). /predict is the one hot path; every other route stays on Express.
 *
 * The lane runs the same pieces in the same order as the Express path (route.ts's mountRoute): request id, metrics
 * and the log line (app.ts's observeRequest), authentication and the rate limit from the headers alone, only then
 * the same JSON body reader (json-request-body.ts, with the route's predict limits), the route's own zod schemas
 * and handler, the seed's error body. It takes only the plain cases, decided from the request line alone, so
 * nothing is read before it decides: POST to /v1/experiments/<id>/predict or /predict, with no query string and
 * an id of letters, digits, '_' or '-'.
 * Anything else (a query, an encoded id, another method, a trailing slash) goes to Express unchanged.
 * test/integration/predict-lane.test.ts sends the same requests to both paths and compares the answers.
 */

const CANONICAL = /^\/v1\/experiments\/([A-Za-z0-9_-]+)\/predict$/;

type Lane = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createPredictLane(services: Services, routes: AnyRoute[]): Lane {
  const canonical = routes.find((r) => r.method === "post" && r.path === "/v1/experiments/{experiment_id}/predict");
  const seed = routes.find((r) => r.method === "post" && r.path === "/predict");
  if (!canonical || !seed) return () => false;
  const seedBody = jsonBodyReaderFor(seed, services.config)!;
  const canonicalBody = jsonBodyReaderFor(canonical, services.config)!;
  return (req, res) => {
    if (req.method !== "POST" || !req.url) return false;
    if (req.url === "/predict") void serve(services, seedBody, seed, {}, req, res);
    else {
      const m = CANONICAL.exec(req.url);
      if (!m) return false;
      void serve(services, canonicalBody, canonical, { experiment_id: m[1] }, req, res);
    }
    return true;
  };
}

/** What the auth service and the predict handlers read of the request and write to the response. */
function adapters(req: IncomingMessage, res: ServerResponse) {
  return {
    req: { method: req.method!, get: (name: string) => header(req, name) },
    res: {
      set(headers: Record<string, string>) {
        for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
      },
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(", ") : v;
}

async function serve(
  services: Services,
  readBody: JsonBodyReader,
  route: AnyRoute,
  params: Record<string, string>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const id = requestId(req.headers["x-request-id"]);
  let log: import("pino").Logger | undefined;
  const logger = () => (log ??= services.logger.child({ request_id: id }));
  res.setHeader("x-request-id", id);
  // As in app.ts: a client that goes away mid-body emits 'error' on the request; without a listener it would end
  // the process.
  req.on("error", (err) => logger().debug({ err: err.message }, "the client went away mid-request"));
  const start = process.hrtime.bigint();
  const url = req.url!;
  res.on("finish", () => observeRequest(services, { method: "POST", url, route: expressPath(route.path), status: res.statusCode, start, log: logger }));
  await requestContext.run({ requestId: id }, async () => {
    try {
      const a = adapters(req, res);
      const auth = await services.auth.authenticate(a.req, a.res, route.auth);
      const parts = validateParts(route, params, {}, await readBody(req, res, logger));
      // The predict handlers read only req.get (x-experiment-id); the cast stands for Express's req/res there.
      const result = await route.handler({ req: a.req as unknown as Request, res: a.res as unknown as Response, ...parts, auth: auth as AuthInfo, services });
      if (!result) throw new Error(`${route.path} answered nothing`);
      send(res, result.status ?? 200, result.body, result.headers);
    } catch (err) {
      const apiError = toApiError(err);
      if (apiError.status >= 500) logger().error({ err }, "request failed");
      if (res.headersSent) return void res.end();
      send(res, apiError.status, predictErrorBody(apiError), apiError.headers);
    }
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  if (headers) for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.statusCode = status;
  sendJson(res, body);
}
