import type { Response } from "express";

// The request-then-stream routes (POST /v1/chat, POST /v1/datasets/from-pacs) answer JSON, or server-sent events
// when the caller asks for text/event-stream. Their common parts live here so the two stay alike.

export const wantsEventStream = (accept: string | undefined) => /\btext\/event-stream\b/i.test(accept ?? "");

export const sendEvent = (res: Response, event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

/** Aborted when the caller leaves before the answer is finished, so the work behind it stops. */
export function abortWhenCallerLeaves(res: Response): AbortController {
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort;
}

/**
 * Sends the stream's headers on the first call and does nothing afterwards: the headers go out with the first event,
 * so a refusal found before it (404, a bad CSV, no PACS, a backend error) is still a plain JSON error.
 */
export function startEventStreamOnce(res: Response): () => void {
  return () => {
    if (res.headersSent) return;
    res
      .status(200)
      .set({ "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
    res.flushHeaders();
  };
}
