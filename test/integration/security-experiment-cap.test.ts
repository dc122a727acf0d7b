import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { experimentRequestSchema, requestHash, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";
import { api, dataRequest, type Api } from "./experiments-fixtures.js";

// Issue 19, finding 3: one key could queue 50 experiments. MAX_ACTIVE_EXPERIMENTS_PER_USER caps queued + running
// experiments per user with a clear 429 too_many_experiments; finished ones free their place; other users are
// not affected; a re-post of an existing experiment is still answered.

const CAP = 3;

describe("per-user cap on queued and running experiments", () => {
  let server: TestServer;
  let alice: { userId: string; client: Api };
  let bob: { userId: string; client: Api };
  beforeAll(async () => {
    // JOB_LEASE_S 600: rows written straight to the database stay queued (the runner's sweep comes back only then).
    server = await startTestServer(primaryTarget(), { MAX_ACTIVE_EXPERIMENTS_PER_USER: String(CAP), JOB_LEASE_S: "600" });
    const a = await createUserWithKey(server);
    const b = await createUserWithKey(server);
    alice = { userId: a.userId, client: api(server.url, a.key) };
    bob = { userId: b.userId, client: api(server.url, b.key) };
  });
  afterAll(async () => server?.teardown());

  /** Queued experiments of the user's, written as POST would, without reaching the runner. */
  const queued = async (userId: string, ids: number[]) => {
    for (const id of ids) {
      const request = withoutToken(experimentRequestSchema.parse(dataRequest(userId, id, `${userId}/x/d.zip`, ["f1"])));
      await server.services.experiments.repo.insert({
        userId: userId,
        workspaceId: await personalWorkspaceId(server.services.db, userId),
        experimentId: id,
        request,
        study: studyOf(request, server.services.config),
        requestHash: requestHash(request),
      });
    }
  };

  it("refuses the experiment past the cap with 429 too_many_experiments, and accepts again once one finished", async () => {
    await queued(alice.userId, [1, 2, 3]);
    const over = await alice.client.post("/v1/experiments", dataRequest(alice.userId, 4, `${alice.userId}/x/d.zip`, ["f1"]));
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe("too_many_experiments");
    expect(over.body.error.message).toMatch(/3 experiments queued or running/);
    expect(over.headers.get("retry-after")).toBe("60");
    expect((await alice.client.get("/v1/experiments/4")).status).toBe(404); // nothing stored

    // The same body as an existing experiment is still the idempotent 200.
    const again = await alice.client.post("/v1/experiments", dataRequest(alice.userId, 1, `${alice.userId}/x/d.zip`, ["f1"]));
    expect(again.status).toBe(200);
    // Another user is not affected.
    expect((await bob.client.post("/v1/experiments", dataRequest(bob.userId, 4, `${bob.userId}/x/d.zip`, ["f1"]))).status).toBe(202);

    expect((await alice.client.post("/v1/experiments/1/cancel")).status).toBe(202);
    expect((await alice.client.post("/v1/experiments", dataRequest(alice.userId, 4, `${alice.userId}/x/d.zip`, ["f1"]))).status).toBe(202);
  });

  it.skipIf(!process.env.TEST_REDIS_URL)(
    "parallel posts cannot overshoot the cap (BullMQ runner with no worker: everything stays queued)",
    async () => {
      const queuedServer = await startTestServer(primaryTarget(), {
        MAX_ACTIVE_EXPERIMENTS_PER_USER: String(CAP),
        BUILDER_RUNNER: "bullmq",
        REDIS_URL: process.env.TEST_REDIS_URL!,
        BULLMQ_QUEUE: `cap-test-${randomBytes(4).toString("hex")}`,
      });
      try {
        const u = await createUserWithKey(queuedServer);
        const client = api(queuedServer.url, u.key);
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            client.post("/v1/experiments", dataRequest(u.userId, 100 + i, `${u.userId}/x/d.zip`, ["f1"])),
          ),
        );
        const statuses = results.map((r) => r.status).sort();
        expect(statuses).toEqual([202, 202, 202, 429, 429, 429, 429, 429]);
        expect((await client.get("/v1/experiments")).body.total).toBe(CAP);
      } finally {
        await queuedServer.teardown();
      }
    },
  );
});
