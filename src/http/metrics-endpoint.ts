import type { Request, Response } from "express";
import { metricsRefusal } from "../auth/metrics-access.js";
import type { Services } from "../services.js";

// The API's GET /metrics; who may read it is src/auth/metrics-access.ts (shared with the worker's WORKER_PORT).

/** GET /metrics on the API (Express): the Prometheus text, for a caller with the token. */
export function metricsHandler(services: Services) {
  return async (req: Request, res: Response) => {
    const refused = metricsRefusal(services.config, req.headers.authorization);
    if (refused) throw refused;
    res.set("cache-control", "no-store");
    res.type(services.metrics.registry.contentType).send(await services.metrics.registry.metrics());
  };
}
