import fs from "node:fs";
import path from "node:path";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { pageSecurityHeaders } from "./page-security.js";

/** Where `make install` (npm run build:web) writes the built single-page app. */
export const DASHBOARD_DIST = path.resolve(import.meta.dirname, "../../web/dist");

// Paths that belong to the API (or to missing built assets): an unknown one is the JSON 404, never index.html.
const API_PATH = /^\/(v1|assets|predict|openapi\.json|docs|metrics|healthz|readyz)(\/|$)/;

const SECURITY_HEADERS = pageSecurityHeaders();

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Builder</title>
<p>The dashboard is not built. Run <code>make install</code> (or <code>npm run build:web</code>) and reload.
The API works without it: see <a href="/docs">/docs</a>.</p>`;

/**
 * Serves the dashboard at / from the same origin as the API (so its session cookie and CSRF token apply):
 * hashed assets with a long cache, and index.html for every other GET that is not an API path (client routes
 * such as /settings/api). Mounted after the API routes, so those always win.
 */
export function dashboardRouter(distDir = DASHBOARD_DIST): Router {
  const router = express.Router();
  // First, so that every file of the build gets them (the static mount answers /index.html itself); the API's
  // own 404s and 405s pass through here too, and keep their headers as they were.
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (req.path.startsWith("/assets/") || !API_PATH.test(req.path)) res.set(SECURITY_HEADERS);
    next();
  });
  router.use("/assets", express.static(path.join(distDir, "assets"), { immutable: true, maxAge: "365d", index: false }));
  router.use(express.static(distDir, { index: false, maxAge: "1h" }));
  router.get(/.*/, (req: Request, res: Response, next: NextFunction) => {
    if (API_PATH.test(req.path)) return next();
    res.set("cache-control", "no-cache");
    const index = path.join(distDir, "index.html");
    if (!fs.existsSync(index)) return void res.status(503).type("html").send(NOT_BUILT);
    res.sendFile(index);
  });
  return router;
}
