import type { EventRow, ExperimentRepository } from "./repository.js";
import { isTerminal } from "./state.js";

/** Anything a stream follows: numbered in the order it was written. */
export interface SeqEvent {
  seq: number;
}

/**
 * Where a hub reads: the events of one key (an experiment, a batch) after a cursor, in order. The experiments'
 * is the events table (a test passes a counting stand-in); a batch's is its row, one snapshot per change.
 */
export interface EventSource<E extends SeqEvent = EventRow> {
  eventsAfter(key: string, afterSeq: number, limit: number): Promise<E[]>;
}

/** What the experiments' hub reads: only the events table. */
export type EventSourceRepo = Pick<ExperimentRepository, "eventsAfter">;

/** One reader's side of a poller: each batch the poller read, in order, or the error that stopped it. */
export interface EventListener<E extends SeqEvent = EventRow> {
  onEvents(events: E[]): void;
  onError(err: unknown): void;
}

export interface Subscription {
  /**
   * True when the poller was already past the reader's starting point when it joined: the reader must read
   * (afterSeq, ...] itself once, then drop the poller's events it already has (seq <= its own cursor).
   */
  readonly needsCatchUp: boolean;
  unsubscribe(): void;
}

export const EVENT_BATCH = 500;

/** One key's poller: a cursor, its readers, and the timer of its next read. */
interface Poller<E extends SeqEvent> {
  readonly key: string;
  cursor: number;
  readonly listeners: Set<EventListener<E>>;
  timer?: NodeJS.Timeout;
  polling: boolean;
  stopped: boolean;
}

export interface EventHubOptions {
  pollMs: number;
  batch?: number;
  /** false: ticks only through pollOnce (tests) */
  autoPoll?: boolean;
}

/**
 * One database poll per key (an experiment, a batch) per tick, whatever the number of readers. Every open events
 * stream used to poll the events table on its own twice a second, so 500 streams of one experiment were 1,000
 * queries a second;
 * now the first reader of an experiment starts its poller, later readers join it, and the last one to leave (or
 * the experiment's terminal status event) stops it. The database stays the bus: the writer may be a BullMQ
 * worker on another host. `isTerminal` says which event is a key's last: its poller stops after it.
 */
export class EventHub<E extends SeqEvent> {
  private readonly pollers = new Map<string, Poller<E>>();

  constructor(
    private readonly repo: EventSource<E>,
    readonly isTerminal: (event: E) => boolean,
    private readonly opts: EventHubOptions = { pollMs: 500 },
  ) {}

  /** Joins (or starts) the key's poller; it delivers every event with seq > afterSeq from now on. */
  subscribe(key: string, afterSeq: number, listener: EventListener<E>): Subscription {
    let poller = this.pollers.get(key);
    let needsCatchUp = false;
    if (!poller) {
      // A new poller starts at this reader's cursor, so its first reads are this reader's replay: no catch-up.
      poller = { key, cursor: afterSeq, listeners: new Set(), polling: false, stopped: false };
      this.pollers.set(key, poller);
      this.schedule(poller, 0);
    } else {
      // Events up to the cursor were handed out before this reader came; it reads those itself, once.
      needsCatchUp = afterSeq < poller.cursor;
    }
    poller.listeners.add(listener);
    const joined = poller;
    return {
      needsCatchUp,
      unsubscribe: () => {
        joined.listeners.delete(listener);
        if (joined.listeners.size === 0) this.stop(joined);
      },
    };
  }

  /** Keys with a running poller (for tests and metrics). */
  get activePollers(): number {
    return this.pollers.size;
  }

  /**
   * One tick of a key's poller: reads the events after its cursor and hands them to every reader.
   * Public so a test can drive ticks without a clock; the timer calls it otherwise.
   */
  async pollOnce(key: string): Promise<void> {
    const poller = this.pollers.get(key);
    if (!poller || poller.polling) return;
    poller.polling = true;
    let full = false;
    try {
      const batch = await this.repo.eventsAfter(key, poller.cursor, this.opts.batch ?? EVENT_BATCH);
      full = batch.length === (this.opts.batch ?? EVENT_BATCH);
      if (batch.length > 0) {
        poller.cursor = batch[batch.length - 1].seq;
        for (const listener of [...poller.listeners]) listener.onEvents(batch);
      }
      // After the terminal status event nothing more is written: every reader ends there, so the poller does too.
      if (batch.some(this.isTerminal)) this.stop(poller);
    } catch (err) {
      for (const listener of [...poller.listeners]) listener.onError(err);
      this.stop(poller);
    } finally {
      poller.polling = false;
    }
    // A full batch means more is waiting (a replay of a long history): read on at once.
    if (!poller.stopped) this.schedule(poller, full ? 0 : this.opts.pollMs);
  }

  private schedule(poller: Poller<E>, delayMs: number): void {
    if (this.opts.autoPoll === false || poller.stopped) return;
    clearTimeout(poller.timer);
    // unref: the open streams keep the process alive, a poller alone must not hold up a shutdown.
    poller.timer = setTimeout(() => void this.pollOnce(poller.key), delayMs).unref();
  }

  private stop(poller: Poller<E>): void {
    poller.stopped = true;
    clearTimeout(poller.timer);
    if (this.pollers.get(poller.key) === poller) this.pollers.delete(poller.key);
  }
}

/** The experiments' hub: their events table, ending at the terminal status event. */
export class ExperimentEventHub extends EventHub<EventRow> {
  constructor(repo: EventSourceRepo, opts: EventHubOptions = { pollMs: 500 }) {
    super(repo, isTerminalEvent, opts);
  }
}

export function isTerminalEvent(event: EventRow): boolean {
  return event.type === "status" && isTerminal((event.data as { status: string }).status);
}
