import type { EventRow, ExperimentRepository, ExperimentRow } from "./repository.js";
import { isTerminal } from "./state.js";

const POLL_MS = 500;
const KEEPALIVE_MS = 15_000;
const BATCH = 500;

export type StreamItem = { event: EventRow } | { keepAlive: true };

/**
 * An experiment's events after `afterSeq`, in order, until its terminal status event (or until the reader is
 * gone: `open()` false). It polls the events table: the writer may be another process (a BullMQ worker), so the
 * database is the bus. After 15 s without an event it yields a keep-alive, so proxies keep the stream open.
 */
export async function* experimentEventStream(repo: ExperimentRepository, row: ExperimentRow, afterSeq: number, open: () => boolean): AsyncGenerator<StreamItem> {
  let after = afterSeq;
  let lastYield = Date.now();
  while (open()) {
    const batch = await repo.eventsAfter(row.id, after, BATCH);
    for (const event of batch) {
      yield { event };
      after = event.seq;
      lastYield = Date.now();
      if (event.type === "status" && isTerminal((event.data as { status: string }).status)) return;
    }
    if (Date.now() - lastYield > KEEPALIVE_MS) {
      yield { keepAlive: true };
      lastYield = Date.now();
    }
    if (batch.length < BATCH) await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
