import { afterAll, beforeAll, expect, it } from "vitest";
import { experiments } from "../../src/db/schema.js";
import { describeEachTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { createUserWithKey } from "../helpers/auth.js";
import { api, dataRequest, waitForStatus, type Api } from "./experiments-fixtures.js";

// The request rules of POST /v1/experiments and reading. Jobs here point at a zip that was never uploaded, so
// they end `failed` quickly with an actionable reason (which is checked too).

describeEachTarget("experiments API on %s", (target) => {
  let server: TestServer;
  let alice: { userId: string; key: string; client: Api };
  let bob: { userId: string; key: string; client: Api };
  beforeAll(async () => {
    server = await startTestServer(target, { JOB_LEASE_S: "2", CALLBACK_SECRET: "0123456789abcdef0123" });
    const a = await createUserWithKey(server);
    const b = await createUserWithKey(server);
    alice = { ...a, client: api(server.url, a.key) };
    bob = { ...b, client: api(server.url, b.key) };
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("needs a credential", async () => {
    const res = await fetch(`${server.url}/v1/experiments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(401);
  });

  it("lists every bad field in one 400 invalid_request", async () => {
    const res = await alice.client.post("/v1/experiments", {
      zip_gcloud: "/abs/path.txt",
      label_cols: [],
      model_type: 5,
      optimization_type: null,
      experiment_id: 0,
      user_id: alice.userId,
      study_type: "prospective",
      task: "vision",
      optimization_metric: "accuracy",
      type_of_experiment: "segmentation",
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    const fields = res.body.error.details.map((d: { field: string }) => d.field);
    for (const f of [
      "zip_gcloud",
      "label_cols",
      "model_type",
      "optimization_type",
      "experiment_id",
      "study_type",
      "optimization_metric",
      "type_of_experiment",
    ]) {
      expect(fields).toContain(f);
    }
  });

  it("refuses a user_id other than the caller's with 403", async () => {
    const res = await alice.client.post("/v1/experiments", dataRequest(bob.userId, 1, `${bob.userId}/x/data.zip`, ["a"]));
    expect(res.status).toBe(403);
  });

  it("accepts with 202 + Location, is idempotent on re-post (200), 409 on a different body; never stores user_token", async () => {
    const body = dataRequest(alice.userId, 11, `${alice.userId}/missing/data.zip`, ["a", "b"], { study_type: "builder" });
    const first = await alice.client.post("/v1/experiments", body);
    expect(first.status).toBe(202);
    expect(first.headers.get("location")).toBe("/v1/experiments/11");
    expect(first.body.request).not.toHaveProperty("user_token");
    expect(first.body.request.study_type).toBe("Builder");
    // How Builder read it, stored beside the request: fast mode with the request's own budget, AUC for a data classification.
    expect(first.body.study).toMatchObject({
      kind: "tabular",
      family: "classification",
      metric: "auc",
      threshold_metric: "auc",
      budget: { mode: "fast" },
    });
    const again = await alice.client.post("/v1/experiments", { ...body, study_type: "BUILDER", user_token: "another-token" });
    expect(again.status).toBe(200);
    expect(again.body.experiment_id).toBe(11);
    expect(again.body.created_at).toBe(first.body.created_at);
    const conflict = await alice.client.post("/v1/experiments", { ...body, optimization_type: 0 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("experiment_id_in_use");
    // The same number is free for another user.
    expect((await bob.client.post("/v1/experiments", dataRequest(bob.userId, 11, `${bob.userId}/missing/data.zip`, ["a"]))).status).toBe(
      202,
    );
    const stored = JSON.stringify(await server.services.db.select({ request: experiments.request }).from(experiments));
    expect(stored).toContain(`${alice.userId}/missing/data.zip`);
    expect(stored).not.toContain("seed-token-never-stored");
    expect(stored).not.toContain("another-token");
  });

  it("ends a job whose zip is missing as failed with a reason the user can act on", async () => {
    const done = await waitForStatus(alice.client, 11, ["failed"], 30_000);
    expect(done.failure_reason).toMatch(/upload it first/);
    expect(done.history.map((h: { status: string }) => h.status)).toEqual(["queued", "fetching", "failed"]);
    expect(done.progress.fraction).toBe(1);
  });

  it("answers 404 for another user's experiment (read, logs, events, cancel), never 403", async () => {
    await alice.client.post("/v1/experiments", dataRequest(alice.userId, 12, `${alice.userId}/missing/data.zip`, ["a"]));
    for (const path of ["/v1/experiments/12", "/v1/experiments/12/logs", "/v1/experiments/12/events"])
      expect((await bob.client.get(path)).status).toBe(404);
    expect((await bob.client.post("/v1/experiments/12/cancel")).status).toBe(404);
    expect((await alice.client.get("/v1/experiments/999")).status).toBe(404);
  });

  it("lists the caller's experiments, paginated and filtered by status", async () => {
    await waitForStatus(alice.client, 12, ["failed"], 30_000);
    const all = await alice.client.get("/v1/experiments?limit=1");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ total: 2, limit: 1, offset: 0, has_more: true });
    expect(all.body.data).toHaveLength(1);
    const failed = await alice.client.get("/v1/experiments?status=failed,ready");
    expect(failed.body.data.map((e: { experiment_id: number }) => e.experiment_id).sort()).toEqual([11, 12]);
    expect((await alice.client.get("/v1/experiments?status=training")).body.total).toBe(0);
    const bad = await alice.client.get("/v1/experiments?status=nope&limit=0");
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.length).toBe(2);
  });

  it("refuses a callback_url the outbound guard would never call (metadata service, credentials)", async () => {
    for (const url of ["http://169.254.169.254/latest/meta-data", "https://user:pw@example.org/hook"]) {
      const res = await alice.client.post(
        "/v1/experiments",
        dataRequest(alice.userId, 14, `${alice.userId}/x/data.zip`, ["a"], { callback_url: url }),
      );
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe("callback_url");
    }
  });

  it("refuses a Retrospective study of an experiment the caller does not have", async () => {
    const res = await alice.client.post(
      "/v1/experiments",
      dataRequest(alice.userId, 13, `${alice.userId}/x/data.zip`, ["a"], { study_type: "Retrospective", source_experiment_id: 404 }),
    );
    expect(res.status).toBe(404);
    expect(res.body.error.details[0].field).toBe("source_experiment_id");
  });
});
