import type { EventRow, ExperimentRepository } from "./repository.js";
import { isTerminal } from "./state.js";

/** What the hub reads: only the events table (a test passes a counting stand-in). */
export type EventSourceRepo = Pick<ExperimentRepository, "eventsAfter">;

/** One reader's side of a poller: each batch the poller read, in order, or the error that stopped it. */
export interface EventListener {
  onEvents(events: EventRow[]): void;
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

/** One experiment's poller: a cursor, its readers, and the timer of its next read. */
interface Poller {
  readonly experimentUuid: string;
  cursor: number;
  readonly listeners: Set<EventListener>;
  timer?: NodeJS.Timeout;
  polling: boolean;
  stopped: boolean;
}

/**
 * One database poll per experiment per tick, whatever the number of readers. Every open events stream used to
 * poll the events table on its own twice a second, so 500 streams of one experiment were 1,000 queries a second;
 * now the first reader of an experiment starts its poller, later readers join it, and the last one to leave (or
 * the experiment's terminal status event) stops it. The database stays the bus: the writer may be a BullMQ
 * worker on another host.
 */
export class ExperimentEventHub {
  private readonly pollers = new Map<string, Poller>();

  constructor(
    private readonly repo: EventSourceRepo,
    private readonly opts: { pollMs: number; batch?: number; /** false: ticks only through pollOnce (tests) */ autoPoll?: boolean } = {
      pollMs: 500,
    },
  ) {}

  /** Joins (or starts) the experiment's poller; it delivers every event with seq > afterSeq from now on. */
  subscribe(experimentUuid: string, afterSeq: number, listener: EventListener): Subscription {
    let poller = this.pollers.get(experimentUuid);
    let needsCatchUp = false;
    if (!poller) {
      // A new poller starts at this reader's cursor, so its first reads are this reader's replay: no catch-up.
      poller = { experimentUuid, cursor: afterSeq, listeners: new Set(), polling: false, stopped: false };
      this.pollers.set(experimentUuid, poller);
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

  /** Experiments with a running poller (for tests and metrics). */
  get activePollers(): number {
    return this.pollers.size;
  }

  /**
   * One tick of an experiment's poller: reads the events after its cursor and hands them to every reader.
   * Public so a test can drive ticks without a clock; the timer calls it otherwise.
   */
  async pollOnce(experimentUuid: string): Promise<void> {
    const poller = this.pollers.get(experimentUuid);
    if (!poller || poller.polling) return;
    poller.polling = true;
    let full = false;
    try {
      const batch = await this.repo.eventsAfter(experimentUuid, poller.cursor, this.opts.batch ?? EVENT_BATCH);
      full = batch.length === (this.opts.batch ?? EVENT_BATCH);
      if (batch.length > 0) {
        poller.cursor = batch[batch.length - 1].seq;
        for (const listener of [...poller.listeners]) listener.onEvents(batch);
      }
      // After the terminal status event nothing more is written: every reader ends there, so the poller does too.
      if (batch.some(isTerminalEvent)) this.stop(poller);
    } catch (err) {
      for (const listener of [...poller.listeners]) listener.onError(err);
      this.stop(poller);
    } finally {
      poller.polling = false;
    }
    // A full batch means more is waiting (a replay of a long history): read on at once.
    if (!poller.stopped) this.schedule(poller, full ? 0 : this.opts.pollMs);
  }

  private schedule(poller: Poller, delayMs: number): void {
    if (this.opts.autoPoll === false || poller.stopped) return;
    clearTimeout(poller.timer);
    // unref: the open streams keep the process alive, a poller alone must not hold up a shutdown.
    poller.timer = setTimeout(() => void this.pollOnce(poller.experimentUuid), delayMs).unref();
  }

  private stop(poller: Poller): void {
    poller.stopped = true;
    clearTimeout(poller.timer);
    if (this.pollers.get(poller.experimentUuid) === poller) this.pollers.delete(poller.experimentUuid);
  }
}

export function isTerminalEvent(event: EventRow): boolean {
  return event.type === "status" && isTerminal((event.data as { status: string }).status);
}
