import { setMaxListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ExperimentEventHub } from "../../src/experiments/event-hub.js";
import { experimentEventStream } from "../../src/experiments/event-stream.js";
import type { EventRow, ExperimentRow } from "../../src/experiments/repository.js";

// Issue 42, finding 5: every events stream polled the database on its own twice a second, so N readers of one
// experiment were N queries per tick. Now one poller per experiment fans out to all its readers. Ticks are driven
// by hand (autoPoll: false) and the repository's reads counted: no clock in these tests.

const UUID = "00000000-0000-0000-0000-000000000001";

/** The events table of one experiment, counting every read. */
function countingRepo() {
  const rows: EventRow[] = [];
  const repo = {
    reads: 0,
    add(type: string, data: unknown) {
      rows.push({ seq: rows.length + 1, experimentUuid: UUID, type, data, at: new Date() } as EventRow);
    },
    async eventsAfter(experimentUuid: string, afterSeq: number, limit = 500): Promise<EventRow[]> {
      repo.reads++;
      return rows.filter((r) => r.experimentUuid === experimentUuid && r.seq > afterSeq).slice(0, limit);
    },
  };
  return repo;
}

/** Reads a stream to its end, recording the event seqs it got. */
function reader(stream: AsyncGenerator<unknown>) {
  const seqs: number[] = [];
  const done = (async () => {
    for await (const item of stream)
      if (item && typeof item === "object" && "event" in item) seqs.push((item as { event: EventRow }).event.seq);
  })();
  return { seqs, done };
}

/** Lets the readers take what the poller handed out (several hops of promises), without a timer. */
async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

const row = { id: UUID } as ExperimentRow;
const forever = { maxLifetimeMs: 3_600_000, keepAliveMs: 3_600_000 };

describe("one shared poller per experiment", () => {
  it("100 readers of one experiment cost one database read per tick, and each gets every event once", async () => {
    const repo = countingRepo();
    const hub = new ExperimentEventHub(repo, { pollMs: 500, autoPoll: false });
    const gone = new AbortController();
    setMaxListeners(200, gone.signal); // one signal for all 100 readers here; a server gives each stream its own
    const readers = Array.from({ length: 100 }, () =>
      reader(experimentEventStream(hub, repo, row, 0, { signal: gone.signal, ...forever })),
    );
    await settle();
    expect(hub.activePollers).toBe(1);
    expect(repo.reads).toBe(0); // joining reads nothing: the poller's reads are everyone's

    repo.add("status", { status: "running" });
    repo.add("progress", { fraction: 0.1 });
    await hub.pollOnce(UUID);
    await settle();
    expect(repo.reads).toBe(1);
    for (const r of readers) expect(r.seqs).toEqual([1, 2]);

    await hub.pollOnce(UUID); // nothing new: still one read for the tick
    repo.add("progress", { fraction: 0.5 });
    repo.add("status", { status: "ready" });
    await hub.pollOnce(UUID);
    await Promise.all(readers.map((r) => r.done));
    expect(repo.reads).toBe(3);
    for (const r of readers) expect(r.seqs).toEqual([1, 2, 3, 4]);
    // The terminal status event ends every stream and the poller with them.
    expect(hub.activePollers).toBe(0);
  });

  it("a reader joining a poller that is past its start reads the missed part once, then shares the ticks", async () => {
    const repo = countingRepo();
    const hub = new ExperimentEventHub(repo, { pollMs: 500, autoPoll: false });
    const gone = new AbortController();
    const early = reader(experimentEventStream(hub, repo, row, 0, { signal: gone.signal, ...forever }));
    repo.add("status", { status: "running" });
    repo.add("progress", { fraction: 0.1 });
    await hub.pollOnce(UUID);
    await settle();
    expect(early.seqs).toEqual([1, 2]);

    const late = reader(experimentEventStream(hub, repo, row, 0, { signal: gone.signal, ...forever }));
    await settle();
    expect(late.seqs).toEqual([1, 2]);
    const readsAfterJoin = repo.reads; // 1 tick + 1 catch-up read
    expect(readsAfterJoin).toBe(2);

    repo.add("progress", { fraction: 0.9 });
    await hub.pollOnce(UUID);
    await settle();
    expect(repo.reads).toBe(readsAfterJoin + 1);
    expect(early.seqs).toEqual([1, 2, 3]);
    expect(late.seqs).toEqual([1, 2, 3]); // no duplicate of 1 and 2 from the shared batch

    gone.abort();
    await Promise.all([early.done, late.done]);
    expect(hub.activePollers).toBe(0); // the last reader to leave stops the poller
  });

  it("readers of two experiments poll separately, one read each per tick", async () => {
    const repo = countingRepo();
    const hub = new ExperimentEventHub(repo, { pollMs: 500, autoPoll: false });
    const gone = new AbortController();
    const other = { id: "00000000-0000-0000-0000-000000000002" } as ExperimentRow;
    const readers = [row, row, other, other, other].map((r) =>
      reader(experimentEventStream(hub, repo, r, 0, { signal: gone.signal, ...forever })),
    );
    await settle();
    expect(hub.activePollers).toBe(2);
    await hub.pollOnce(row.id);
    await hub.pollOnce(other.id);
    expect(repo.reads).toBe(2);
    gone.abort();
    await Promise.all(readers.map((r) => r.done));
    expect(hub.activePollers).toBe(0);
  });
});
