import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { experimentRequestSchema, requestHash, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";
import type { ExperimentRow } from "../../src/experiments/repository.js";
import { dataRequest, waitFor } from "./experiments-fixtures.js";

// Issue 42, finding 5: one key held 500 events streams open on a running experiment (the rate limit counts only
// the opening request), each polling the database, none ever closed. Now: at most EVENT_STREAMS_PER_USER open
// streams per user (429 too_many_streams past it), and each stream ends after EVENT_STREAM_MAX_S with a
// `reconnect` event, after which Last-Event-ID (or ?after=) resumes with nothing lost. The one-poll-per-tick
// fan-out is tested without a clock in test/unit/experiments-event-hub.test.ts.
//
// Experiments here are rows written straight to the database with JOB_LEASE_S 600, so they stay queued (the
// runner's sweep comes back only then) and their events are the ones the test writes.

/** An open events stream read incrementally: what arrived so far, waiting for more, closing it. */
async function openStream(server: TestServer, key: string, path: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const res = await fetch(`${server.url}${path}`, { headers: bearer(key, headers), signal: abort.signal });
  let text = "";
  let ended = false;
  const reader = res.status === 200 ? res.body!.getReader() : undefined;
  const decoder = new TextDecoder();
  return {
    res,
    get text() {
      return text;
    },
    /** Reads until `done(text)` or the end of the stream; false when the stream ended first. */
    async readUntil(done: (text: string) => boolean): Promise<boolean> {
      while (!done(text)) {
        if (ended || !reader) return false;
        const chunk = await reader.read();
        if (chunk.done) ended = true;
        else text += decoder.decode(chunk.value, { stream: true });
      }
      return true;
    },
    close() {
      abort.abort();
    },
  };
}

const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

async function queuedExperiment(server: TestServer, userId: string, experimentId: number): Promise<ExperimentRow> {
  const request = withoutToken(experimentRequestSchema.parse(dataRequest(userId, experimentId, `${userId}/x/d.zip`, ["f1"])));
  const row = await server.services.experiments.repo.insert({
    userId: userId,
    workspaceId: await personalWorkspaceId(server.services.db, userId),
    experimentId,
    request,
    study: studyOf(request, server.services.config),
    requestHash: requestHash(request),
  });
  return row!;
}

describe("open events streams per user", () => {
  const CAP = 3;
  let server: TestServer;
  let alice: UserWithKey;
  let bob: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { EVENT_STREAMS_PER_USER: String(CAP), JOB_LEASE_S: "600" });
    alice = await createUserWithKey(server);
    bob = await createUserWithKey(server);
    await queuedExperiment(server, alice.userId, 1);
    await queuedExperiment(server, bob.userId, 1);
  });
  afterAll(async () => server?.teardown());

  it("the (cap+1)-th stream is a 429 too_many_streams while the first cap are open; closing one frees a slot", async () => {
    const open = [];
    for (let i = 0; i < CAP; i++) {
      const stream = await openStream(server, alice.key, "/v1/experiments/1/events");
      expect(stream.res.status).toBe(200);
      open.push(stream);
    }
    const over = await fetch(`${server.url}/v1/experiments/1/events`, { headers: bearer(alice.key) });
    expect(over.status).toBe(429);
    const body = (await over.json()) as any;
    expect(body.error.code).toBe("too_many_streams");
    expect(body.error.type).toBe("rate_limit_error");
    expect(body.error.message).toMatch(/already have 3 event streams open/);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);

    // Another user's streams are counted apart.
    const bobs = await openStream(server, bob.key, "/v1/experiments/1/events");
    expect(bobs.res.status).toBe(200);
    bobs.close();
    // A missing experiment is still the 404 it was, not a 429 that would hint at anything.
    expect((await fetch(`${server.url}/v1/experiments/99/events`, { headers: bearer(alice.key) })).status).toBe(404);

    open.shift()!.close();
    // The server hears the close asynchronously: retry until the freed slot is taken (each 429 holds nothing).
    const reopened = await waitFor(
      "a freed stream slot",
      async () => {
        const s = await openStream(server, alice.key, "/v1/experiments/1/events");
        if (s.res.status === 200) return s;
        await s.res.body?.cancel();
        return undefined;
      },
      10_000,
      20,
    );
    open.push(reopened);
    expect((await fetch(`${server.url}/v1/experiments/1/events`, { headers: bearer(alice.key) })).status).toBe(429);
    for (const s of open) s.close();
  });

  it("a stream that ends by itself (terminal status) gives its slot back", async () => {
    const row = await queuedExperiment(server, alice.userId, 2);
    await server.services.experiments.repo.addEvent(row.id, "status", { status: "cancelled" });
    // The previous test's streams were closed by the client just now; the server hears that asynchronously.
    await waitFor(
      "the previous test's slots back",
      async () => {
        const res = await fetch(`${server.url}/v1/experiments/2/events`, { headers: bearer(alice.key) });
        await res.text();
        return res.status === 200 || undefined;
      },
      10_000,
      20,
    );
    for (let i = 0; i < CAP + 2; i++) {
      const res = await fetch(`${server.url}/v1/experiments/2/events`, { headers: bearer(alice.key) });
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/event: status/); // read to its end: the slot is free again
    }
  });
});

describe("maximum stream lifetime", () => {
  let server: TestServer;
  let alice: UserWithKey;
  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { EVENT_STREAM_MAX_S: "1", JOB_LEASE_S: "600" });
    alice = await createUserWithKey(server);
  });
  afterAll(async () => server?.teardown());

  it.each([
    ["Last-Event-ID", (last: number) => ({ path: "/v1/experiments/EXP/events", headers: { "last-event-id": String(last) } })],
    ["?after=", (last: number) => ({ path: `/v1/experiments/EXP/events?after=${last}`, headers: {} })],
  ])("a stream past its lifetime ends with event: reconnect, and resuming with %s loses no event", async (_how, resume) => {
    const experimentId = resume(0).path.includes("after") ? 12 : 11;
    const row = await queuedExperiment(server, alice.userId, experimentId);
    const repo = server.services.experiments.repo; // the row already has its "queued" status event
    await repo.addEvent(row.id, "status", { status: "validating" });
    await repo.addEvent(row.id, "progress", { fraction: 0.1 });

    const first = await openStream(server, alice.key, `/v1/experiments/${experimentId}/events`);
    expect(first.res.status).toBe(200);
    expect(await first.readUntil((t) => ids(t).length === 3)).toBe(true);
    await repo.addEvent(row.id, "progress", { fraction: 0.2 }); // reaches the open stream through the poller
    expect(await first.readUntil((t) => /event: reconnect/.test(t))).toBe(true);
    expect(await first.readUntil(() => false)).toBe(false); // and then the server ends it
    const reconnect = JSON.parse(/event: reconnect\ndata: (.*)\n/.exec(first.text)![1]!);
    expect(reconnect.reason).toBe("max_lifetime");
    const seen = ids(first.text);
    expect(reconnect.last_event_id).toBe(seen.at(-1));

    // Written while no stream is open, then the experiment ends.
    await repo.addEvent(row.id, "progress", { fraction: 0.3 });
    await repo.addEvent(row.id, "status", { status: "cancelled" });
    const { path, headers } = resume(reconnect.last_event_id);
    const second = await openStream(server, alice.key, path.replace("EXP", String(experimentId)), headers);
    expect(second.res.status).toBe(200);
    expect(await second.readUntil(() => false)).toBe(false); // ends at the terminal status event
    expect(second.text).not.toMatch(/event: reconnect/);

    for (const bad of ["1e3", "-1", "abc", "99999999999999999999"]) {
      const res = await fetch(`${server.url}/v1/experiments/${experimentId}/events?after=${bad}`, { headers: bearer(alice.key) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.details[0].field).toMatch(/after/);
    }

    const all = (await repo.eventsAfter(row.id, 0)).map((e) => e.seq);
    expect(all).toHaveLength(6);
    expect([...seen, ...ids(second.text)]).toEqual(all); // every event once, in order
  });
});
