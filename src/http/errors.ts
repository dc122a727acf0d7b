// One error shape for every failure: {"error": {"code", "message", "type", "details"?}}.

export interface ErrorDetail {
  field: string;
  message: string;
  [extra: string]: unknown;
}

const TYPE_BY_STATUS: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "invalid_request_error",
  415: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
  503: "unavailable_error",
};

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

  get type(): string {
    return TYPE_BY_STATUS[this.status] ?? (this.status >= 500 ? "api_error" : "invalid_request_error");
  }

  toBody() {
    return {
      error: {
        code: this.code,
        message: this.message,
        type: this.type,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

export const errors = {
  invalidRequest: (message: string, details?: ErrorDetail[]) => new ApiError(400, "invalid_request", message, details),
  notFound: (what = "resource") => new ApiError(404, "not_found", `${what} not found`),
  forbidden: (message: string, code = "forbidden") => new ApiError(403, code, message),
  conflict: (message: string, code = "conflict") => new ApiError(409, code, message),
  internal: () => new ApiError(500, "internal_error", "something went wrong on our side; the request id identifies it in the logs"),
};
