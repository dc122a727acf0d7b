import { describe, expect, it } from "vitest";
import { FairQueue } from "../../src/batches/fair-queue.js";

// Issue 48, finding 4: batches shared one first-come queue, so one user's three large files held another user's
// small one for 118 s. The rule: at most `concurrency` at once, at most `perUser` per user, a free slot to the
// waiting user served least recently.

/** Tasks that end when the test says, recording the order they started in. */
function harness(opts: { concurrency: number; perUser: number }) {
  const queue = new FairQueue(opts);
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const add = (user: string, name: string) =>
    queue.add(user, () => {
      started.push(name);
      return new Promise<void>((resolve) => finish.set(name, resolve));
    });
  const end = async (name: string) => {
    finish.get(name)!();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  const settle = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { queue, started, add, end, settle };
}

describe("FairQueue", () => {
  it("one slot: another user's file goes next, not after the first user's other files", async () => {
    const h = harness({ concurrency: 1, perUser: 1 });
    h.add("alice", "a1");
    h.add("alice", "a2");
    h.add("alice", "a3");
    h.add("bob", "b1");
    await h.settle();
    expect(h.started).toEqual(["a1"]);
    await h.end("a1");
    expect(h.started).toEqual(["a1", "b1"]);
    h.add("carol", "c1");
    await h.end("b1");
    await h.end("c1");
    await h.end("a2");
    await h.end("a3");
    expect(h.started).toEqual(["a1", "b1", "c1", "a2", "a3"]);
    await h.queue.onIdle();
    expect(h.queue.size).toBe(0);
  });

  it("two slots, one per user: a second user starts at once beside the first user's file", async () => {
    const h = harness({ concurrency: 2, perUser: 1 });
    h.add("alice", "a1");
    h.add("alice", "a2");
    h.add("alice", "a3");
    await h.settle();
    expect(h.started).toEqual(["a1"]);
    h.add("bob", "b1");
    await h.settle();
    expect(h.started).toEqual(["a1", "b1"]);
    await h.end("b1");
    expect(h.started).toEqual(["a1", "b1"]); // alice's second waits for her first, however many slots are free
    await h.end("a1");
    expect(h.started).toEqual(["a1", "b1", "a2"]);
  });

  it("a task that fails frees its slot", async () => {
    const queue = new FairQueue({ concurrency: 1, perUser: 1 });
    const ran: string[] = [];
    queue.add("alice", async () => {
      ran.push("boom");
      throw new Error("boom");
    });
    queue.add("alice", async () => void ran.push("next"));
    await queue.onIdle();
    expect(ran).toEqual(["boom", "next"]);
  });
});
