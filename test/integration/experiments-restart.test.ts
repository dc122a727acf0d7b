import { execFileSync } from "node:child_process";
import { Readable } from "node:stream";
import { afterAll, describe, expect, it, vi } from "vitest";
import { startServer, type RunningServer } from "../../src/server.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { api, dataRequest, tabularZip, waitFor, waitForStatus } from "./experiments-fixtures.js";

// A graceful restart of serve mid-training (SIGTERM, deploys): the runner kills the pipeline, releases the lease,
// and the next start re-runs the job at once. Runs on PGlite too (the kill -9 variant, with child processes,
// is in experiments-crash.test.ts and needs Postgres).

vi.setConfig({ testTimeout: 240_000 });

const pythonOf = (uuid: string) => {
  try {
    return execFileSync("pgrep", ["-f", `work/${uuid}/spec.json`])
      .toString()
      .trim()
      .split("\n")
      .filter(Boolean);
  } catch {
    return [];
  }
};

describe(`graceful restart of serve on ${primaryTarget()}`, () => {
  let server: TestServer;
  let again: RunningServer | undefined;
  afterAll(async () => {
    await again?.stop();
    await server?.teardown();
  });

  it("stops the pipeline with the server and finishes the job after the restart", async () => {
    server = await startTestServer(primaryTarget(), { JOB_LEASE_S: "30" });
    const user = await createUserWithKey(server);
    const data = tabularZip();
    const zipPath = `${user.userId}/tabular/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(data.zip));
    const first = api(server.url, user.key);
    expect((await first.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, data.dataCols, { time_budget_s: 6 }))).status).toBe(
      202,
    );
    await waitForStatus(first, 1, ["training"], 90_000);
    const row = (await server.services.experiments.repo.byUserNumber(user.userId, 1))!;
    await waitFor("the pipeline process", async () => pythonOf(row.id).length > 0, 30_000, 100);

    await server.stop();
    expect(pythonOf(row.id)).toEqual([]);
    // A lease of 30 s would delay a crash recovery; a clean stop released it, so the restart does not wait for it.
    const t0 = Date.now();
    again = await startServer(server.services.config, { port: 0, host: "127.0.0.1" });
    const client = api(again.url, user.key);
    await waitFor("the re-run to start", async () => (await client.get("/v1/experiments/1")).body.attempts === 2, 20_000);
    expect(Date.now() - t0).toBeLessThan(20_000);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset", "cancelled"], 180_000);
    expect(done.status).toBe("ready");
    expect(done.history.find((h: { attempt?: number }) => h.attempt === 2)?.status).toBe("fetching");
  });
});
