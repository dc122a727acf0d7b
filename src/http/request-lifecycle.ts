import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../logger.js";
import type { Services } from "../services.js";
import type { ApiError } from "../errors.js";
import { toApiError } from "./errors.js";
import { newRequestId } from "../monitoring/request-id.js";

// What happens to every request around its route, on both ways in: Express (app.ts's first middleware and its error
// handler) and the /predict lane (predict-lane.ts). One module, so the two cannot drift apart.

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's x-request-id when it is a sane token, else a new one (time-ordered: newRequestId). */
export function requestId(incoming: string | string[] | undefined): string {
  return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : newRequestId();
}

/**
 * A request's first step: its id on the response, a listener for a client that goes away mid-body, and, once the
 * answer is sent, its metrics and log line. `route` is the matched route pattern (metric labels stay bounded),
 * asked for when the request ends: Express knows it only then.
 */
export function startRequest(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  log: () => Logger,
  route: () => string,
): void {
  res.setHeader("x-request-id", id);
  // A client that goes away mid-body makes the request emit 'error' (ECONNRESET "aborted"), possibly before any
  // handler listens; with no listener at all that error would end the process. Whoever reads the body sees the
  // close itself; here it is only noted.
  req.on("error", (err) => log().debug({ err: err.message }, "the client went away mid-request"));
  const start = process.hrtime.bigint();
  const method = req.method!;
  const url = req.url!; // before any router rewrites it (Express's originalUrl)
  res.on("finish", () => observeRequest(services, method, url, route(), res.statusCode, start, log));
}

function observeRequest(
  services: Services,
  method: string,
  url: string,
  route: string,
  status: number,
  start: bigint,
  log: () => Logger,
): void {
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const labels = { method, route, status: String(status) };
  services.metrics.requests.inc(labels);
  services.metrics.latency.observe(labels, seconds);
  if (services.logger.isLevelEnabled("info")) {
    log().info({ method, url: url.split("?")[0], status, ms: Math.round(seconds * 1000) }, "request");
  }
}

/** Anything a request threw, as the error it answers; a 5xx is logged with what was thrown. */
export function failureOf(err: unknown, log: () => Logger): ApiError {
  const apiError = toApiError(err);
  if (apiError.status >= 500) log().error({ err }, "request failed");
  return apiError;
}
