import { EVENT_BATCH, type EventHub, type EventListener, type EventSource, type EventSourceRepo, type SeqEvent } from "./event-hub.js";
import type { EventRow, ExperimentRow } from "./repository.js";

const KEEPALIVE_MS = 15_000;

/**
 * An event; a keep-alive comment; or the end of the stream's lifetime: the client reconnects with Last-Event-ID
 * (or ?after=) set to `lastEventId` and loses nothing.
 */
export type StreamItem<E extends SeqEvent = EventRow> = { event: E } | { keepAlive: true } | { lifetimeEnded: { lastEventId: number } };

export interface StreamOptions {
  /** Aborted when the reader is gone. */
  signal: AbortSignal;
  /** The stream ends (with lifetimeEnded) this long after it opened, so no stream holds its slot forever. */
  maxLifetimeMs: number;
  keepAliveMs?: number;
}

/** An experiment's events after `afterSeq` until its terminal status event: eventStream over its events table. */
export function experimentEventStream(
  hub: EventHub<EventRow>,
  repo: EventSourceRepo,
  row: ExperimentRow,
  afterSeq: number,
  opts: StreamOptions,
): AsyncGenerator<StreamItem> {
  return eventStream(hub, repo, row.id, afterSeq, opts);
}

/**
 * A key's events after `afterSeq`, in order, until its terminal event (the hub's isTerminal), the reader leaving,
 * or the stream's maximum lifetime. It reads through the hub's shared poller of the key (one database read per
 * tick however many readers); a reader that joins a poller already past its starting point reads that part once
 * itself. After 15 s without an event it yields a keep-alive, so proxies keep the stream open. Experiments' and
 * batches' streams both run here.
 */
export async function* eventStream<E extends SeqEvent>(
  hub: EventHub<E>,
  repo: EventSource<E>,
  key: string,
  afterSeq: number,
  opts: StreamOptions,
): AsyncGenerator<StreamItem<E>> {
  const isTerminalEvent = hub.isTerminal;
  const deadline = Date.now() + opts.maxLifetimeMs;
  const keepAliveMs = opts.keepAliveMs ?? KEEPALIVE_MS;
  const inbox = new Inbox<E>();
  // Joined before the catch-up read, so nothing written between that read and the first tick is missed.
  const subscription = hub.subscribe(key, afterSeq, inbox);
  let after = afterSeq;
  try {
    if (subscription.needsCatchUp) {
      for (;;) {
        const batch = await repo.eventsAfter(key, after, EVENT_BATCH);
        for (const event of batch) {
          yield { event };
          after = event.seq;
          if (isTerminalEvent(event)) return;
        }
        if (batch.length < EVENT_BATCH || opts.signal.aborted) break;
      }
    }
    let lastYield = Date.now();
    while (!opts.signal.aborted) {
      const now = Date.now();
      if (now >= deadline) {
        yield { lifetimeEnded: { lastEventId: after } };
        return;
      }
      const events = await inbox.take(Math.min(deadline, lastYield + keepAliveMs) - now, opts.signal);
      for (const event of events) {
        if (event.seq <= after) continue; // already read in the catch-up
        yield { event };
        after = event.seq;
        lastYield = Date.now();
        if (isTerminalEvent(event)) return;
      }
      if (events.length === 0 && Date.now() - lastYield >= keepAliveMs && Date.now() < deadline) {
        yield { keepAlive: true };
        lastYield = Date.now();
      }
    }
  } finally {
    subscription.unsubscribe();
  }
}

/** The poller's batches for one reader, waiting until some arrive, a timeout, or the reader leaves. */
class Inbox<E extends SeqEvent> implements EventListener<E> {
  private queued: E[] = [];
  private failure: unknown;
  private wake?: () => void;

  onEvents(events: E[]): void {
    this.queued.push(...events);
    this.wake?.();
  }

  onError(err: unknown): void {
    this.failure = err ?? new Error("event poller failed");
    this.wake?.();
  }

  /** The events queued so far (waiting up to `timeoutMs` for the first); [] on timeout or abort. */
  async take(timeoutMs: number, signal: AbortSignal): Promise<E[]> {
    if (this.queued.length === 0 && this.failure === undefined && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          this.wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, timeoutMs));
        signal.addEventListener("abort", done, { once: true });
        this.wake = done;
      });
    }
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- passes the caught error on unchanged (truthiness narrows `unknown` to `{}`)
    if (this.queued.length === 0 && this.failure !== undefined) throw this.failure;
    const out = this.queued;
    this.queued = [];
    return out;
  }
}
