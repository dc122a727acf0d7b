// The one error type of the house, on the ground floor: domain code (auth, datasets, experiments, serving, net,
// cli) throws it without knowing about HTTP. It carries its status, as trigger.dev's ServiceValidationError does,
// because every caller (the HTTP edge, the admin socket, the CLI) answers with it; the wire body and the error
// `type` are the HTTP edge's business (src/http/errors.ts).

export interface ErrorDetail {
  field: string;
  message: string;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public readonly details?: ErrorDetail[] | Record<string, unknown>,
    public readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const errors = {
  invalidRequest: (message: string, details?: ErrorDetail[]) => new ApiError(400, "invalid_request", message, details),
  notFound: (what = "resource") => new ApiError(404, "not_found", `${what} not found`),
  forbidden: (message: string, code = "forbidden") => new ApiError(403, code, message),
  conflict: (message: string, code = "conflict") => new ApiError(409, code, message),
  internal: () => new ApiError(500, "internal_error", "something went wrong on our side; the request id identifies it in the logs"),
};
