import { createHash, timingSafeEqual } from "node:crypto";
import type { Config } from "../config.js";
import { ApiError, msg } from "../errors.js";

// Who may read /metrics (the API's port and the worker's WORKER_PORT). The numbers name every route, its traffic
// and error rates, the process's memory and versions: nothing a stranger on the hospital network should read.
//
// METRICS_TOKEN unset: /metrics is off (404). Not "loopback only": behind a reverse proxy on the same host (the
// usual set-up outside compose) every request reaches the API from 127.0.0.1, so a loopback rule would let the
// whole network in through the proxy. METRICS_TOKEN set: Prometheus sends `Authorization: Bearer <token>`
// (its `authorization.credentials`); a missing or wrong token is 401.

const CHALLENGE = { "www-authenticate": 'Bearer realm="metrics"' };

/** Why this request may not read the metrics, or undefined when it may. */
export function metricsRefusal(config: Pick<Config, "METRICS_TOKEN">, authorization: string | undefined): ApiError | undefined {
  if (!config.METRICS_TOKEN) {
    return new ApiError(404, "not_found", msg("auth.metrics_off"));
  }
  const presented = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "")?.[1];
  if (!presented) return new ApiError(401, "missing_metrics_token", msg("auth.missing_metrics_token"), undefined, CHALLENGE);
  if (!sameSecret(presented, config.METRICS_TOKEN))
    return new ApiError(401, "invalid_metrics_token", msg("auth.invalid_metrics_token"), undefined, CHALLENGE);
  return undefined;
}

/** Compared as SHA-256 digests, in constant time: equal lengths for timingSafeEqual, and no early exit to time. */
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
