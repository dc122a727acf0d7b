import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { requestContext } from "../process-guard.js";
import { predictErrorBody } from "./errors.js";
import { preferredLanguage } from "./error-language.js";
import { sendJson } from "./json-body.js";
import { failureOf, requestId, startRequest } from "./request-lifecycle.js";
import { expressPath, routeRunner, type AnyPlainRoute, type AnyRoute, type RouteRequest, type RunRoute } from "./route.js";

/**
 * The two /predict routes served on node:http directly, before Express sees the request. Why: Express gives every
 * request its own req/res prototypes (Object.setPrototypeOf), which makes each later property access on them slow;
 * on this 2-core machine a bare node:http handler answered a tiny prediction at 31-35k req/s, the same with
 * Express's prototypes set 11k, an Express route 7k, while Builder's whole stack did ~3.5k
 * (bench/serve/express-overhead.ts). /predict is the one hot path; every other route stays on Express.
 *
 * The lane is not a second pipeline: it runs the route builder's own runRoute (route.ts: authentication and the
 * rate limit from the headers alone, then the JSON body with the route's predict limits, the route's zod schemas,
 * its handler, the answer) inside the same request steps as Express (request-lifecycle.ts: request id, the
 * client-gone listener, metrics and the log line), and answers failures with the seed's error body. It serves only
 * plain routes (route.ts's PlainRouteDef), whose handlers the compiler holds to the request's method and headers,
 * the part both ways in have. It takes only the plain cases, decided from the request line alone, so nothing is
 * read before it decides: POST to /v1/experiments/<id>/predict or /predict, with no query string and an id of
 * letters, digits, '_' or '-'. Anything else (a query, an encoded id, another method, a trailing slash) goes to
 * Express unchanged. test/integration/predict-lane.test.ts sends the same requests to both ways in and compares
 * the answers.
 */

const CANONICAL = /^\/v1\/experiments\/([A-Za-z0-9_-]+)\/predict$/;
/** The lane's requests carry no query string (those go to Express); the seed route's schema parses this. */
const NO_QUERY = Object.freeze({});

type Lane = (req: IncomingMessage, res: ServerResponse) => boolean;

interface LaneRoute {
  run: RunRoute;
  /** The metric label, as Express's matched pattern reads. */
  label: string;
  query: unknown;
}

export function createPredictLane(services: Services, routes: AnyRoute[]): Lane {
  const canonical = laneRoute(services, routes, "/v1/experiments/{experiment_id}/predict");
  const seed = laneRoute(services, routes, "/predict");
  if (!canonical || !seed) return () => false;
  return (req, res) => {
    if (req.method !== "POST" || !req.url) return false;
    if (req.url === "/predict") void serve(services, seed, {}, req, res);
    else {
      const m = CANONICAL.exec(req.url);
      if (!m) return false;
      void serve(services, canonical, { experiment_id: m[1] }, req, res);
    }
    return true;
  };
}

function laneRoute(services: Services, routes: AnyRoute[], path: string): LaneRoute | undefined {
  const route = routes.find((r) => r.method === "post" && r.path === path);
  if (!route) return undefined;
  if (!isPlain(route)) throw new Error(`POST ${path} must be a plain route (plain: true) to be served on the /predict lane`);
  return { run: routeRunner(route, services), label: expressPath(route.path), query: route.query ? NO_QUERY : undefined };
}

function isPlain(route: AnyRoute): route is AnyPlainRoute {
  return route.plain === true;
}

/** The request as a plain handler and authentication read it: its method and headers (Express's req.get). */
function requestView(req: IncomingMessage): RouteRequest {
  return {
    method: req.method!,
    get(name: string) {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? v.join(", ") : v;
    },
  };
}

/** Where authentication sets its rate-limit headers (Express's res.set). */
function headerSetter(res: ServerResponse) {
  return {
    set(headers: Record<string, string>) {
      for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    },
  };
}

async function serve(
  services: Services,
  route: LaneRoute,
  params: Record<string, string>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const id = requestId(req.headers["x-request-id"]);
  let log: Logger | undefined;
  const logger = () => (log ??= services.logger.child({ request_id: id }));
  startRequest(services, req, res, id, logger, () => route.label);
  await requestContext.run({ requestId: id }, async () => {
    try {
      await route.run({
        req: requestView(req),
        res: headerSetter(res),
        incoming: req,
        outgoing: res,
        params,
        query: route.query,
        log: logger,
      });
    } catch (err) {
      const apiError = failureOf(err, logger);
      if (res.headersSent) return void res.end();
      if (apiError.headers) for (const [k, v] of Object.entries(apiError.headers)) res.setHeader(k, v);
      res.statusCode = apiError.status;
      sendJson(res, predictErrorBody(apiError, preferredLanguage(req.headers["accept-language"])));
    }
  });
}
