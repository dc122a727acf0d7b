import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { api, dataRequest, tabularZip, waitFor, waitForStatus, type Api } from "./experiments-fixtures.js";

// The whole path through the real Python process (builder_pipelines.tabular): POST -> ready with every stage in
// order, the model in the store, SSE, logs, the signed callback, a Retrospective on the published model, cancel.

const SECRET = "callback-secret-0123456789";
const processesOf = (uuid: string) => {
  try {
    return execFileSync("pgrep", ["-f", uuid]).toString().trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

vi.setConfig({ testTimeout: 180000 });

describe(`experiment end to end on ${primaryTarget()}`, () => {
  let server: TestServer;
  let user: { userId: string; key: string };
  let client: Api;
  let zipPath: string;
  let dataCols: string[];
  const published: Array<{ experimentId: number; version: number; storePath: string }> = [];
  const callbacks: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  let hooks: http.Server;
  let hookUrl: string;

  beforeAll(async () => {
    hooks = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        callbacks.push({ headers: req.headers, body });
        // The first delivery fails, so the retry path runs too.
        res.writeHead(callbacks.length === 1 ? 503 : 204).end();
      });
    });
    await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
    hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
    server = await startTestServer(primaryTarget(), {
      CALLBACK_SECRET: SECRET,
      CALLBACK_RETRY_BASE_MS: "100",
      FETCH_ALLOW_HOSTS: "127.0.0.1",
      JOB_LEASE_S: "4",
    });
    server.services.events.on("model:published", (row) => published.push(row));
    user = await createUserWithKey(server);
    client = api(server.url, user.key);
    const data = tabularZip();
    dataCols = data.dataCols;
    zipPath = `${user.userId}/tabular/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(data.zip));
  });
  afterAll(async () => {
    await server?.teardown();
    hooks?.close();
  });

  it("trains a data experiment to ready through the real pipeline, every stage in order", async () => {
    const post = await client.post("/v1/experiments", dataRequest(user.userId, 1, zipPath, dataCols, { callback_url: hookUrl }));
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 1, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    expect(done.status).toBe("ready");
    expect(done.history.map((h: { status: string }) => h.status)).toEqual([
      "queued",
      "fetching",
      "validating",
      "training",
      "evaluating",
      "publishing",
      "ready",
    ]);
    const times = done.history.map((h: { at: string }) => Date.parse(h.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(done.progress).toMatchObject({ fraction: 1, stage: "ready" });
    expect(done.dataset_report.valid).toBe(true);
    // Test metrics in contract names with bootstrap intervals.
    const auc = done.metrics.auc;
    expect(auc.value).toBeGreaterThan(0.8);
    expect(auc.ci_low).toBeLessThanOrEqual(auc.value);
    expect(auc.ci_high).toBeGreaterThanOrEqual(auc.value);
    expect(done.model).toMatchObject({ version: 1, kind: "tabular", store_path: `models/${user.userId}/1/v1` });
    expect(published).toEqual([expect.objectContaining({ experimentId: 1, version: 1, storePath: `models/${user.userId}/1/v1` })]);
    const stored = await server.services.bucket.list(`models/${user.userId}/1/v1/`);
    expect(stored).toEqual(
      expect.arrayContaining([
        `models/${user.userId}/1/v1/model.onnx`,
        `models/${user.userId}/1/v1/manifest.json`,
        `models/${user.userId}/1/v1/spec.json`,
      ]),
    );
    // The resolved spec the model was trained from stays with it (the work folder that held it is removed).
    const chunks: Buffer[] = [];
    for await (const c of await server.services.bucket.read(`models/${user.userId}/1/v1/spec.json`)) chunks.push(c as Buffer);
    const spec = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    expect(spec).toMatchObject({
      kind: "tabular",
      command: "train",
      metric: "auc",
      threshold_metric: "auc",
      budget: { mode: "fast", time_budget_s: 4 },
    });
    expect(spec.split.test.length).toBeGreaterThan(0);
    // The work folder goes right after the terminal state is written (removal is asynchronous); the log stays.
    const uuid = (await server.services.experiments.repo.byUserNumber(user.userId, 1))!.id;
    await expect.poll(() => fs.existsSync(path.join(server.dataDir, "work", uuid)), { timeout: 10_000 }).toBe(false);
    expect(fs.existsSync(path.join(server.dataDir, "logs", `${uuid}.log`))).toBe(true);
    const logs = await client.get("/v1/experiments/1/logs");
    expect(logs.status).toBe(200);
    expect(logs.body).toContain("status ready");
    expect(logs.body).not.toContain("seed-token-never-stored");
    // A job run by a worker on another host leaves no local file here: the copy in the bucket answers.
    // The copy is made before the terminal state is written, so it is there, with its last line, once `ready` is.
    expect(await server.services.bucket.stat(`logs/${user.userId}/1/${uuid}.log`)).toBeTruthy();
    fs.rmSync(path.join(server.dataDir, "logs", `${uuid}.log`));
    const fromBucket = await client.get("/v1/experiments/1/logs");
    expect(fromBucket.body).toContain("status ready");
  });

  it("replays every state change over Server-Sent Events and ends the stream at the terminal state", async () => {
    const res = await fetch(`${server.url}/v1/experiments/1/events`, { headers: { authorization: `Bearer ${user.key}` } });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const text = await res.text(); // ends by itself after `ready`
    const statuses = [...text.matchAll(/event: status\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]).status);
    expect(statuses).toEqual(["queued", "fetching", "validating", "training", "evaluating", "publishing", "ready"]);
    expect(text).toMatch(/event: progress\n/);
    // Resuming with Last-Event-ID replays only what came after it.
    const publishingId = [...text.matchAll(/id: (\d+)\nevent: status\ndata: (.*)\n/g)].find(
      (m) => JSON.parse(m[2]).status === "publishing",
    )![1];
    const resumed = await (
      await fetch(`${server.url}/v1/experiments/1/events`, {
        headers: { authorization: `Bearer ${user.key}`, "last-event-id": publishingId },
      })
    ).text();
    expect([...resumed.matchAll(/event: status\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]).status)).toEqual(["ready"]);
  });

  it("POSTs a signed callback on the terminal state, retrying after a 5xx", async () => {
    await waitFor("two callback deliveries", async () => callbacks.length >= 2, 15_000);
    const last = callbacks[1];
    const payload = JSON.parse(last.body);
    expect(payload).toMatchObject({ experiment_id: 1, status: "ready", user_id: user.userId });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(last.headers["x-builder-signature"]))!;
    expect(v1).toBe(createHmac("sha256", SECRET).update(`${t}.${last.body}`).digest("hex"));
  });

  it("a Retrospective study tests the published model on new data: new metrics beside the original ones", async () => {
    const post = await client.post(
      "/v1/experiments",
      dataRequest(user.userId, 2, zipPath, dataCols, { study_type: "Retrospective", source_experiment_id: 1 }),
    );
    expect(post.status).toBe(202);
    const done = await waitForStatus(client, 2, ["ready", "failed", "invalid_dataset"], 120_000);
    expect(done.failure_reason).toBeNull();
    expect(done.history.map((h: { status: string }) => h.status)).toEqual([
      "queued",
      "fetching",
      "validating",
      "evaluating",
      "publishing",
      "ready",
    ]);
    expect(done.metrics.auc.value).toBeGreaterThan(0.8);
    const original = (await client.get("/v1/experiments/1")).body.metrics;
    expect(done.original_metrics).toEqual(original);
  });

  it("cancel mid-training: the Python process is gone within 5 s and the experiment ends cancelled", async () => {
    await client.post("/v1/experiments", dataRequest(user.userId, 3, zipPath, dataCols, { time_budget_s: 120 }));
    const running = await waitForStatus(client, 3, ["training"], 60_000);
    const row = await server.services.experiments.repo.byUserNumber(user.userId, 3);
    await waitFor("the pipeline process", async () => processesOf(row!.id).length > 0, 20_000, 100);
    expect(running.status).toBe("training");
    const t0 = Date.now();
    const cancel = await client.post("/v1/experiments/3/cancel");
    expect(cancel.status).toBe(202);
    await waitFor("the process to be gone", async () => processesOf(row!.id).length === 0, 5_000, 100);
    const done = await waitForStatus(client, 3, ["cancelled"], 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(done.history.at(-1).status).toBe("cancelled");
    expect((await client.post("/v1/experiments/3/cancel")).status).toBe(409);
  });
});
