import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { createServices, type Services } from "../../src/services.js";
import { ExperimentRepository } from "../../src/experiments/repository.js";
import { createThrowawayDatabase, describeEachTarget } from "../helpers/db.js";
import { createUserWithKey, personalWorkspaceId } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { Readable } from "node:stream";
import type { JobDeps } from "../../src/jobs/deps.js";
import { experimentRequestSchema, withoutToken } from "../../src/experiments/request.js";
import { studyOf } from "../../src/experiments/study.js";
import { runExperimentJob } from "../../src/jobs/experiment-job.js";
import { logFileOf, logObjectOf } from "../../src/experiments/log.js";
import { isTerminal } from "../../src/experiments/state.js";
import type { PrepareDataset } from "../../src/jobs/dataset-stage.js";

// The lease in the experiments row is what keeps one job from running twice, whatever the queue does:
// one UPDATE decides who holds it, and every later write is conditional on still holding it.

describeEachTarget("experiment lease on %s", (target) => {
  let services: Services;
  let repo: ExperimentRepository;
  let userId: string;
  let drop: (() => Promise<void>) | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lease-"));
  beforeAll(async () => {
    const db = target === "postgres" ? await createThrowawayDatabase() : undefined;
    drop = db?.drop;
    services = await createServices(
      parseConfig({ LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir, ...(db ? { DATABASE_URL: db.url } : {}) }),
      { runner: false },
    );
    repo = new ExperimentRepository(services.db);
    userId = (await createUserWithKey({ services } as TestServer)).userId;
  });
  afterAll(async () => {
    await services?.close();
    await drop?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("lets exactly one of many concurrent runners take the lease", async () => {
    const row = (await repo.insert({
      userId: userId,
      workspaceId: await personalWorkspaceId(services.db, userId),
      experimentId: 1,
      request: {},
      study: null,
      requestHash: "h1",
    }))!;
    const owners = Array.from({ length: 8 }, (_, i) => `runner-${i}`);
    const results = await Promise.all(owners.map((o) => repo.acquireLease(row.id, o, 30)));
    const winners = results.filter(Boolean);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!.leaseOwner!;
    for (const o of owners.filter((x) => x !== winner)) {
      expect(await repo.renewLease(row.id, o, 30)).toBeNull();
      expect(await repo.transition(row.id, "fetching", { owner: o })).toBeNull();
    }
    expect(await repo.transition(row.id, "fetching", { owner: winner })).not.toBeNull();
  });

  it("hands a lapsed lease to a new runner; the old holder's writes are then refused", async () => {
    const row = (await repo.insert({
      userId: userId,
      workspaceId: await personalWorkspaceId(services.db, userId),
      experimentId: 2,
      request: {},
      study: null,
      requestHash: "h2",
    }))!;
    expect(await repo.acquireLease(row.id, "old", 1)).not.toBeNull();
    expect(await repo.acquireLease(row.id, "new", 1)).toBeNull();
    await new Promise((r) => setTimeout(r, 1300));
    const taken = await repo.acquireLease(row.id, "new", 30);
    expect(taken?.attempts).toBe(2);
    expect(await repo.renewLease(row.id, "old", 30)).toBeNull();
    expect(await repo.transition(row.id, "training", { owner: "old" })).toBeNull();
    expect(await repo.transition(row.id, "fetching", { owner: "new" })).not.toBeNull();
  });

  it("never leases a finished experiment", async () => {
    const row = (await repo.insert({
      userId: userId,
      workspaceId: await personalWorkspaceId(services.db, userId),
      experimentId: 3,
      request: {},
      study: null,
      requestHash: "h3",
    }))!;
    await repo.transition(row.id, "cancelled", { fromStatus: ["queued"] });
    expect(await repo.acquireLease(row.id, "late", 30)).toBeNull();
    const after = await repo.byId(row.id);
    expect(after?.history).toEqual([expect.objectContaining({ status: "queued" }), expect.objectContaining({ status: "cancelled" })]);
  });

  const request = (n: number) => ({
    zip_gcloud: `${userId}/x/data.zip`,
    label_cols: ["y"],
    data_cols: ["a"],
    model_type: 0,
    optimization_type: 1,
    experiment_id: n,
    user_id: userId,
    study_type: "Builder",
    task: "data",
    optimization_metric: "AUC",
    type_of_experiment: "classification",
  });
  const studyFor = (n: number) => studyOf(withoutToken(experimentRequestSchema.parse(request(n))), services.config);
  const deps = (runnerId: string, prepareDataset: PrepareDataset): JobDeps => ({
    config: services.config,
    repo,
    bucket: services.bucket,
    logger: services.logger,
    events: services.events,
    runnerId,
    prepareDataset,
  });

  it("two runners handed the same job: one runs it, the other waits on the lease and then skips it", async () => {
    await services.bucket.write(`${userId}/x/data.zip`, Readable.from(Buffer.from("zip")));
    const row = (await repo.insert({
      userId: userId,
      workspaceId: await personalWorkspaceId(services.db, userId),
      experimentId: 4,
      request: request(4),
      study: studyFor(4),
      requestHash: "h4",
    }))!;
    let running = 0;
    let most = 0;
    let calls = 0;
    const prepare: PrepareDataset = async () => {
      calls++;
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 1500));
      running--;
      return {
        report: {
          valid: false,
          errors: [{ severity: "error", code: "test", message: "refused on purpose" }],
          warnings: [],
          errors_omitted: 0,
          warnings_omitted: 0,
          summary: {},
        },
        sha256: "",
      };
    };
    const stop = new AbortController().signal;
    const a = runExperimentJob(deps("runner-a", prepare), row.id, stop);
    await new Promise((r) => setTimeout(r, 200));
    const b = runExperimentJob(deps("runner-b", prepare), row.id, stop);
    expect(await Promise.all([a, b])).toEqual(["finished", "skipped"]);
    expect(calls).toBe(1);
    expect(most).toBe(1);
    const done = (await repo.byId(row.id))!;
    expect(done.status).toBe("invalid_dataset");
    expect(done.attempts).toBe(1);
  });

  it("writes the terminal line to the log, and the log's copy to the bucket, before the terminal status is visible", async () => {
    // A client polls for the terminal status and then reads GET .../logs (from this host, or from the bucket when a
    // worker elsewhere ran the job): the last line must already be there when the status changes.
    await services.bucket.write(`${userId}/x/data.zip`, Readable.from(Buffer.from("zip")));
    const row = (await repo.insert({
      userId: userId,
      workspaceId: await personalWorkspaceId(services.db, userId),
      experimentId: 6,
      request: request(6),
      study: studyFor(6),
      requestHash: "h6",
    }))!;
    const lastLines: string[] = [];
    const watched = Object.create(repo) as ExperimentRepository;
    watched.transition = async (id, status, opts) => {
      if (isTerminal(status)) {
        const chunks: Buffer[] = [];
        if (await services.bucket.stat(logObjectOf(userId, row)))
          for await (const c of await services.bucket.read(logObjectOf(userId, row))) chunks.push(c as Buffer);
        for (const text of [fs.readFileSync(logFileOf(services.config, id), "utf8"), Buffer.concat(chunks).toString("utf8")])
          lastLines.push(text.trim().split("\n").at(-1)!);
      }
      return repo.transition(id, status, opts);
    };
    const prepare: PrepareDataset = async () => ({
      report: {
        valid: false,
        errors: [{ severity: "error", code: "test", message: "refused on purpose" }],
        warnings: [],
        errors_omitted: 0,
        warnings_omitted: 0,
        summary: {},
      },
      sha256: "",
    });
    expect(await runExperimentJob({ ...deps("runner-c", prepare), repo: watched }, row.id, new AbortController().signal)).toBe("finished");
    expect((await repo.byId(row.id))!.status).toBe("invalid_dataset");
    expect(lastLines).toHaveLength(2);
    for (const line of lastLines) expect(line).toMatch(/\] status invalid_dataset/);
  });

  it("gives up, with the reason, on a job interrupted JOB_MAX_ATTEMPTS times", async () => {
    const row = (await repo.insert({
      userId: userId,
      workspaceId: await personalWorkspaceId(services.db, userId),
      experimentId: 5,
      request: request(5),
      study: studyFor(5),
      requestHash: "h5",
    }))!;
    for (let i = 0; i < services.config.JOB_MAX_ATTEMPTS; i++) {
      await repo.acquireLease(row.id, `crashed-${i}`, 1);
      await repo.releaseLease(row.id, `crashed-${i}`);
    }
    const result = await runExperimentJob(
      deps("survivor", async () => {
        throw new Error("must not be called");
      }),
      row.id,
      new AbortController().signal,
    );
    expect(result).toBe("finished");
    const done = (await repo.byId(row.id))!;
    expect(done.status).toBe("failed");
    expect(done.failureReason).toMatch(/interrupted 3 times/);
  });
});
