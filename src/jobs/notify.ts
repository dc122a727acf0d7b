import type { ExperimentRow } from "../experiments/repository.js";
import { deliverCallback, guardedSender, type CallbackSender } from "./callback.js";
import type { JobDeps } from "./deps.js";

let sender: CallbackSender | undefined;
/** Tests swap the sender; production goes through the outbound guard. */
export function setCallbackSender(s: CallbackSender | undefined): void {
  sender = s;
}

/** Fire-and-forget: the signed callback on a terminal state, when the request asked for one. */
export function notifyTerminal(deps: Pick<JobDeps, "config" | "logger">, row: ExperimentRow): void {
  const url = (row.request as { callback_url?: string }).callback_url;
  if (!url || !deps.config.CALLBACK_SECRET) return;
  void deliverCallback(
    url,
    {
      experiment_id: row.experimentId,
      user_id: row.userId,
      status: row.status,
      reason: row.failureReason,
      metrics: row.metrics ?? undefined,
      at: new Date().toISOString(),
    },
    {
      secret: deps.config.CALLBACK_SECRET,
      send: sender ?? guardedSender(deps.config),
      logger: deps.logger,
      baseDelayMs: deps.config.CALLBACK_RETRY_BASE_MS,
    },
  );
}
