import { createHmac } from "node:crypto";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";

export interface CallbackPayload {
  experiment_id: number;
  /** Who built the experiment; null when their account was erased and the experiment stayed with its workspace. */
  user_id: string | null;
  status: string;
  reason?: string | null;
  metrics?: unknown;
  at: string;
}

/** What actually sends the POST; the outbound guard in production, a plain function in unit tests. */
export type CallbackSender = (
  url: string,
  init: { headers: Record<string, string>; body: string; timeoutMs: number },
) => Promise<{ status: number }>;

export const guardedSender =
  (config: Config): CallbackSender =>
  async (url, init) => {
    const { guardedFetch } = await import("../net/outbound-guard.js");
    const res = await guardedFetch(url, {
      method: "POST",
      headers: init.headers,
      body: init.body,
      timeoutMs: init.timeoutMs,
      maxBytes: 64 * 1024,
      allowHosts: config.FETCH_ALLOW_HOSTS,
    });
    return { status: res.status };
  };

/**
 * `X-Builder-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with CALLBACK_SECRET.
 * The timestamp inside the signed text lets the receiver refuse replays.
 */
export function signCallback(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${mac}`;
}

/**
 * Sends the terminal-state callback; retries on network errors and 5xx/429 with exponential backoff
 * (base, 2×base, 4×base ...). A 4xx other than 429 is the receiver's final word and is not retried.
 * Never throws: the experiment's outcome does not depend on the receiver.
 */
export async function deliverCallback(
  url: string,
  payload: CallbackPayload,
  opts: { secret: string; send: CallbackSender; logger: Logger; attempts?: number; baseDelayMs?: number },
): Promise<{ delivered: boolean; attempts: number; lastStatus?: number; lastError?: string }> {
  const body = JSON.stringify(payload);
  const attempts = opts.attempts ?? 6;
  let lastStatus: number | undefined;
  let lastError: string | undefined;
  for (let i = 1; i <= attempts; i++) {
    try {
      const res = await opts.send(url, {
        body,
        timeoutMs: 10_000,
        headers: {
          "content-type": "application/json",
          "x-builder-signature": signCallback(opts.secret, body),
          "x-builder-event": `experiment.${payload.status}`,
        },
      });
      lastStatus = res.status;
      if (res.status >= 200 && res.status < 300) return { delivered: true, attempts: i, lastStatus };
      if (res.status < 500 && res.status !== 429) break;
    } catch (err) {
      lastError = (err as Error).message;
    }
    if (i < attempts) await new Promise((r) => setTimeout(r, (opts.baseDelayMs ?? 1000) * 2 ** (i - 1)));
  }
  opts.logger.warn({ experiment_id: payload.experiment_id, status: lastStatus, err: lastError }, "callback not delivered");
  return { delivered: false, attempts, lastStatus, lastError };
}
