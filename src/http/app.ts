import express, { type NextFunction, type Request, type Response } from "express";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import { ApiError, msg } from "../errors.js";
import { errorBody, predictErrorBody } from "./errors.js";
import { preferredLanguage } from "./error-language.js";
import { failureOf, requestId, startRequest } from "./request-lifecycle.js";
import { buildOpenApi } from "./openapi.js";
import { mountRoute, type AnyRoute } from "./route.js";
import { DOCS_SCRIPT, docsPage } from "./docs-page.js";
import { pageSecurityHeaders } from "./page-security.js";
import { dashboardRouter } from "./dashboard.js";
import { requestContext } from "../process-guard.js";
import { metricsHandler } from "./metrics-endpoint.js";

declare module "express-serve-static-core" {
  interface Request {
    id: string;
    log: import("pino").Logger;
  }
}

const REQUEST_LOG = Symbol("request log");

/**
 * Middleware order matters: request id and logging first (so every later line carries the id),
 * metrics, routes (each authenticates, then reads its body), then the 404 and the one error handler.
 */
export function createApp(services: Services, routes: AnyRoute[], version = "0.1.0") {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", services.config.TRUST_PROXY);
  app.set("query parser", "extended");

  // req.log is made on first use: a pino child logger costs microseconds, and a request whose lines are all
  // below the level (LOG_LEVEL=warn or silent) never needs one. Defined once on this app's request prototype.
  Object.defineProperty(app.request, "log", {
    configurable: true,
    get(this: Request & { [REQUEST_LOG]?: Logger }) {
      return (this[REQUEST_LOG] ??= services.logger.child({ request_id: this.id }));
    },
  });

  app.use((req: Request, res: Response, next: NextFunction) => {
    req.id = requestId(req.headers["x-request-id"]);
    // The matched route pattern keeps metric labels bounded; unmatched paths share one label.
    startRequest(
      services,
      req,
      res,
      req.id,
      () => req.log,
      () => matchedRoute(req),
    );
    requestContext.run({ requestId: req.id }, next);
  });

  // Every failure on the /predict paths (auth, body, model, image) answers the seed's prediction contract (`error: 1`).
  // JSON bodies are read by the route builder after authentication (route.ts), never here for every request.
  app.use(PREDICT_PATHS, (_req: Request, res: Response, next: NextFunction) => {
    res.locals.predictContract = true;
    next();
  });

  const router = express.Router();
  for (const route of [...routes.filter((r) => r.mountFirst), ...routes.filter((r) => !r.mountFirst)])
    mountRoute(router, route, services, services.auth.authenticate);
  const openapi = buildOpenApi(routes, version);
  router.get("/openapi.json", (_req, res) => void res.json(openapi));
  const docsHeaders = pageSecurityHeaders([DOCS_SCRIPT]);
  router.get("/docs", (_req, res) => void res.set(docsHeaders).type("html").send(docsPage()));
  router.get("/metrics", metricsHandler(services));
  app.use(router);
  app.use(dashboardRouter());

  const allowed = allowedMethods(routes);
  app.use((req: Request) => {
    // A known path with another method is 405 with Allow (RFC 9110), not 404: the resource exists.
    const methods = allowed(req.path);
    if (methods.length) {
      throw new ApiError(
        405,
        "method_not_allowed",
        msg("request.method_not_allowed", { method: req.method, path: req.path, methods: methods.join(", ") }),
        undefined,
        {
          allow: methods.join(", "),
        },
      );
    }
    throw new ApiError(404, "not_found", msg("request.no_route", { method: req.method, path: req.path }));
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const apiError = failureOf(err, () => req.log);
    if (res.headersSent) return void res.end();
    if (apiError.headers) res.set(apiError.headers);
    const lang = preferredLanguage(req.headers["accept-language"]);
    res.status(apiError.status).json(res.locals.predictContract ? predictErrorBody(apiError, lang) : errorBody(apiError, lang));
  });
  return app;
}

const PREDICT_PATHS = ["/predict", "/v1/experiments/:experiment_id/predict"];

/** path -> the methods routed there (HEAD with GET, as Express answers it), for 405 answers. */
function allowedMethods(routes: AnyRoute[]): (path: string) => string[] {
  const byPattern = new Map<string, { re: RegExp; methods: Set<string> }>();
  for (const r of routes) {
    const re = new RegExp(
      `^${r.path
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
        .join("[^/]+")}/?$`,
    );
    const entry = byPattern.get(r.path) ?? { re, methods: new Set<string>() };
    entry.methods.add(r.method.toUpperCase());
    if (r.method === "get") entry.methods.add("HEAD");
    byPattern.set(r.path, entry);
  }
  return (path) => [...new Set([...byPattern.values()].filter((e) => e.re.test(path)).flatMap((e) => [...e.methods]))].sort();
}

/** The matched route's pattern, which keeps metric labels bounded (Express types req.route as any). */
function matchedRoute(req: Request): string {
  const route = req.route as { path?: string } | undefined;
  return route?.path ? `${req.baseUrl}${route.path}` : "unmatched";
}
