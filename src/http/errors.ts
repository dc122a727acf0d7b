// The HTTP edge of src/errors.ts: every failure leaves as {"error": {"code", "message", "type", "details"?}}.
import { ApiError, errors, msg, detail } from "../errors.js";
import { ModelNotPublished } from "../serving/errors.js";
import { localizeError, type ApiLanguage } from "./error-language.js";

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  409: "conflict_error",
  413: "invalid_request_error",
  415: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
  503: "unavailable_error",
};

export function errorType(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** The error body; `lang` (preferredLanguage of the request's Accept-Language) chooses the words, never the code. */
export function errorBody(error: ApiError, lang: ApiLanguage = "en") {
  const { message, details } = localizeError(error, lang);
  return {
    error: {
      code: error.code,
      message,
      type: errorType(error.status),
      ...(details ? { details } : {}),
    },
  };
}

/**
 * A failed prediction in the seed's contract: `error` is the number 1 (a success says 0), so a client that tests
 * `error == 1` sees every failure; code, message, type (and details) sit beside it at the top level.
 */
export function predictErrorBody(e: ApiError, lang: ApiLanguage = "en") {
  const { error } = errorBody(e, lang);
  return { error: 1, ...error };
}

/**
 * An experiment without a published model. With its state (/predict): 409 model_not_ready, saying whether to wait
 * or that it ended without one; without (the model routes): 404, the model asked for is not there.
 */
function modelNotPublished(e: ModelNotPublished): ApiError {
  const status = e.experimentStatus;
  const id = e.experimentId;
  if (status === undefined) return new ApiError(404, "not_found", msg("experiment.no_published_model_plain", { id }));
  // Being deleted (DELETE /v1/experiments/{id} unpublished it first): as good as gone.
  if (status === "deleting") return new ApiError(404, "not_found", msg("experiment.being_deleted", { id }));
  const ended = status === "failed" || status === "cancelled";
  return new ApiError(409, "model_not_ready", msg(ended ? "experiment.model_ended_without" : "experiment.model_not_yet", { id, status }), [
    detail("experiment_id", msg("experiment.status_is", { status }), { status }),
  ]);
}

/**
 * Anything thrown in a request: our own errors as they are, the domain's typed errors mapped (here and nowhere
 * else), Express body-parser failures mapped, the rest a 500.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ModelNotPublished) return modelNotPublished(err);
  const e = err as { type?: string; status?: number; message?: string; limit?: number };
  if (e?.type === "request.aborted") return new ApiError(400, "upload_interrupted", msg("request.interrupted"));
  if (e?.type === "entity.parse.failed") return new ApiError(400, "invalid_json", msg("request.json_invalid", { why: e.message ?? "" }));
  if (e?.type === "entity.too.large")
    return new ApiError(413, "payload_too_large", msg("request.json_too_large", { bytes: e.limit ?? 1_048_576 }));
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported")
    return new ApiError(415, "unsupported_encoding", msg("request.unsupported_encoding", { why: e.message ?? "" }));
  return errors.internal();
}
