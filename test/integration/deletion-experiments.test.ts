import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batches, experimentEvents, experiments, models } from "../../src/db/schema.js";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { plantObject, storageEnv, storedFiles, TEST_STORAGE } from "../helpers/storage.js";
import { plant } from "./deletion-fixtures.js";
import { execFileSync } from "node:child_process";
import { Readable } from "node:stream";
import { api, dataRequest, startExperimentServer, tabularZip, waitFor, waitForStatus } from "./experiments-fixtures.js";

// DELETE /v1/experiments/{id} on two API replicas sharing one Postgres, one data folder and one bucket (in the storage
// suite: the data folder's, and an S3 bucket). Replica B has the model loaded; the deletion goes through A.

describe.skipIf(!process.env.TEST_DATABASE_URL || !haveFixturePython)(
  `DELETE /v1/experiments/{id} on two replicas (${TEST_STORAGE})`,
  () => {
    const fx = haveFixturePython ? servingFixtures() : (undefined as never);
    let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
    let dataDir: string;
    let a: TestServer;
    let b: TestServer;
    let alice: UserWithKey;
    let bob: UserWithKey;

    const predict = async (s: TestServer, key: string, exp: number) => {
      const res = await fetch(`${s.url}/v1/experiments/${exp}/predict`, {
        method: "POST",
        headers: bearer(key, { "content-type": "application/json" }),
        body: JSON.stringify({ message: fx.expected["tabular_binary/row0"].row }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    /** The data folder's files and the shared bucket's objects (as bucket/<path>), wherever the bucket is. */
    const stored = () => storedFiles(dataDir, a.services.bucket);

    beforeAll(async () => {
      db = await createThrowawayDatabase();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-deletion-"));
      const env = { DATABASE_URL: db.url, BUILDER_DATA_DIR: dataDir, API_KEY_CACHE_TTL_S: "60", ...(await storageEnv()) };
      a = await startTestServer("pglite", env); // "pglite": no throwaway of its own; DATABASE_URL wins
      b = await startTestServer("pglite", env);
      alice = await createUserWithKey(a);
      bob = await createUserWithKey(a);
    });
    afterAll(async () => {
      await a?.teardown();
      await b?.teardown();
      await db?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("removes every file of the experiment, unloads its model on the other replica at once, and touches nothing else", async () => {
      const model = fx.modelDir("tabular_binary");
      const v1 = await publishFixture(a, alice.userId, 7, model, 1);
      const v2 = await publishFixture(a, alice.userId, 7, model, 2);
      const other = await publishFixture(a, alice.userId, 8, model); // alice's other experiment
      // A batch scored with each: experiment 7's results go with it, experiment 8's stay.
      const batch = (row: typeof v1) => ({
        userId: alice.userId,
        workspaceId: row.workspaceId,
        experimentUuid: row.experimentUuid,
        experimentId: row.experimentId,
        modelVersion: 1,
        inputKind: "table",
        status: "done",
      });
      const [batch7] = await a.services.db.insert(batches).values(batch(v1)).returning();
      const [batch8] = await a.services.db.insert(batches).values(batch(other)).returning();
      await publishFixture(a, bob.userId, 7, model); // bob's experiment with the same number
      const [exp] = await a.services.db.select().from(experiments).where(eq(experiments.id, v1.experimentUuid));
      await a.services.experiments.repo.addEvent(exp.id, "status", { status: "ready", at: new Date().toISOString() });
      // What a job leaves: a report figure beside the model, the log's bucket copy, the local log, the work folder.
      const own = [
        await plantObject(a.services.bucket, `models/${alice.userId}/7/v2/figures/roc.svg`, "<svg/>"),
        await plantObject(a.services.bucket, `logs/${alice.userId}/7/${exp.id}.log`, "log"),
        plant(dataDir, `logs/${exp.id}.log`, "log"),
        plant(dataDir, `work/${exp.id}/dataset/table.csv`, "a,b"),
        await plantObject(a.services.bucket, `${alice.userId}/batches/${batch7.id}/results.csv`, "id,score"),
      ];
      await plantObject(a.services.bucket, `${alice.userId}/batches/${batch8.id}/results.csv`, "id,score");
      await plantObject(a.services.bucket, `logs/${bob.userId}/7/other.log`, "bob's log");

      // Both replicas serve it, so both have v2 loaded.
      expect((await predict(a, alice.key, 7)).status).toBe(201);
      expect((await predict(b, alice.key, 7)).status).toBe(201);
      expect(b.services.serving.cache.stats().ids).toContain(v2.id);
      const before = await stored();
      // Each replica copied the model into its own cache folder (src/serving/model-cache.ts).
      const copies = [a, b].map((s) => path.relative(dataDir, path.join(s.services.serving.cache.dir, v2.id, "model.onnx")));
      expect(copies[0]).not.toBe(copies[1]);
      expect(before).toEqual(expect.arrayContaining([...own, `bucket/models/${alice.userId}/7/v1/model.onnx`, ...copies]));

      // Bob cannot delete it: 404, as if it did not exist.
      expect((await api(a.url, bob.key).del("/v1/experiments/8")).status).toBe(404);

      const res = await api(a.url, alice.key).del("/v1/experiments/7");
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ experiment_id: 7, status: "deleting" });
      expect(res.body.message).toContain("/predict");
      // Unpublished before the answer: neither replica serves it from here on (B learns it by notification).
      expect((await predict(a, alice.key, 7)).status).toBe(404);
      const t0 = Date.now();
      await waitFor("replica B to unload the model", async () => !b.services.serving.cache.stats().ids.includes(v2.id), 5_000, 10);
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect((await predict(b, alice.key, 7)).status).toBe(404);

      await waitFor(
        "the experiment to be gone",
        async () => (await api(a.url, alice.key).get("/v1/experiments/7")).status === 404,
        20_000,
        100,
      );
      const after = await stored();
      const removed = before.filter((f) => !after.includes(f));
      // Everything that was the experiment's is gone, and only that.
      const isAlice7 = (f: string) =>
        f.includes(exp.id) ||
        f.startsWith(`bucket/models/${alice.userId}/7/`) ||
        f.includes(v1.id) ||
        f.includes(v2.id) ||
        f.includes(batch7.id);
      expect(removed.sort()).toEqual(before.filter(isAlice7).sort());
      expect(after.filter(isAlice7)).toEqual([]);
      expect(removed).toEqual(expect.arrayContaining(own));
      expect(after).toEqual(
        expect.arrayContaining([
          `bucket/models/${alice.userId}/8/v1/model.onnx`,
          `bucket/models/${bob.userId}/7/v1/model.onnx`,
          `bucket/logs/${bob.userId}/7/other.log`,
          `bucket/${alice.userId}/batches/${batch8.id}/results.csv`,
        ]),
      );
      // No empty folder keeps its number either (S3 has no folders).
      if (TEST_STORAGE === "local") expect(fs.existsSync(path.join(dataDir, "bucket/models", alice.userId, "7"))).toBe(false);

      const { db: d } = a.services;
      expect(await d.select().from(experiments).where(eq(experiments.id, exp.id))).toEqual([]);
      expect(await d.select().from(models).where(eq(models.experimentUuid, exp.id))).toEqual([]);
      expect(await d.select().from(experimentEvents).where(eq(experimentEvents.experimentUuid, exp.id))).toEqual([]);
      // The others still serve.
      expect((await predict(b, alice.key, 8)).status).toBe(201);
      expect((await predict(b, bob.key, 7)).status).toBe(201);
    });

    it("a second DELETE of the same experiment is 404 once it is gone; another user's number is never reached", async () => {
      await publishFixture(a, alice.userId, 9, fx.modelDir("tabular_binary"));
      const client = api(a.url, alice.key);
      expect((await client.del("/v1/experiments/9")).status).toBe(202);
      await waitFor("experiment 9 to be gone", async () => (await client.get("/v1/experiments/9")).status === 404, 20_000, 100);
      expect((await client.del("/v1/experiments/9")).status).toBe(404);
      expect((await client.del(`/v1/experiments/${randomBytes(2).readUInt16BE() + 100000}`)).status).toBe(404);
    });
  },
);

// A running job: the deletion cancels it through the cancel path (the flag its lease heartbeat carries), waits for
// it to let go, and only then removes its files; the job's own "cancelled" is refused (nothing leaves `deleting`).
describe(`DELETE /v1/experiments/{id} of a running experiment (${TEST_STORAGE})`, () => {
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

  it("stops the training process, removes its work folder and log, and the row; nothing is published", async () => {
    const { server, user, client } = await startExperimentServer();
    try {
      const data = tabularZip();
      const zipPath = `${user.userId}/running/data.zip`;
      await server.services.datasets.upload(user.scope, zipPath, Readable.from(data.zip));
      expect(
        (await client.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, data.dataCols, { time_budget_s: 60 }))).status,
      ).toBe(202);
      await waitForStatus(client, 1, ["training"], 120_000);
      const row = (await server.services.experiments.repo.byUserNumber(user.userId, 1))!;
      await waitFor("the pipeline process", async () => pythonOf(row.id).length > 0, 60_000, 100);
      expect((await storedFiles(server.dataDir, server.services.bucket)).some((f) => f.startsWith(`work/${row.id}/`))).toBe(true);

      const t0 = Date.now();
      expect((await client.del("/v1/experiments/1")).status).toBe(202);
      expect((await client.get("/v1/experiments/1")).body.status).toBe("deleting");
      await waitFor("the experiment to be gone", async () => (await client.get("/v1/experiments/1")).status === 404, 30_000, 100);
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(pythonOf(row.id)).toEqual([]);
      const left = (await storedFiles(server.dataDir, server.services.bucket)).filter(
        (f) => f.includes(row.id) || f.startsWith(`bucket/models/${user.userId}/`) || f.startsWith(`bucket/logs/${user.userId}/`),
      );
      expect(left).toEqual([]);
      expect(await server.services.experiments.repo.modelsOf(row.id)).toEqual([]);
      // The dataset upload is the user's own and stays.
      expect(await storedFiles(server.dataDir, server.services.bucket)).toContain(`bucket/${zipPath}`);
    } finally {
      await server.teardown();
    }
  }, 240_000);
});
