import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "./logger.js";

// The last line of defence: an error no handler caught (a stream's 'error' with no listener, a promise nobody
// awaited) must not end a server that holds other users' uploads and running training. The guard is installed
// only once start-up has succeeded, so a genuine start-up failure (bad configuration, port in use, database
// unreachable) still ends the process with its message and a non-zero exit code.

/** The request an async chain belongs to: set by the app's first middleware, read when logging a stray error. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

export interface ProcessGuard {
  /** Stray errors seen since installation (also in the logs, with the request id where known). */
  readonly count: number;
  uninstall(): void;
}

/**
 * Logs every uncaught exception and unhandled rejection at error level, with the request id when the error
 * happened inside a request's async chain, and keeps the process serving.
 */
export function installProcessGuard(logger: Logger): ProcessGuard {
  let count = 0;
  const log = (kind: string, err: unknown) => {
    count++;
    const requestId = requestContext.getStore()?.requestId ?? (err as { requestId?: string } | undefined)?.requestId;
    logger.error({ err, kind, ...(requestId ? { request_id: requestId } : {}) }, `${kind}: logged; the server keeps serving`);
  };
  const onRejection = (reason: unknown) => log("unhandled rejection", reason);
  const onException = (err: Error) => log("uncaught exception", err);
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return {
    get count() {
      return count;
    },
    uninstall() {
      process.off("unhandledRejection", onRejection);
      process.off("uncaughtException", onException);
    },
  };
}
