import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { JobDeps } from "../../src/jobs/deps.js";
import type { DeviceSlot } from "../../src/jobs/gpu-slots.js";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { api, dataRequest, tabularZip, waitFor, type Api } from "./experiments-fixtures.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

// GET /v1/admin/workers and the drain routes with the default in-process runner (PGlite): the server is the one
// runner, listed with its slots and the job it runs; there is no worker to drain (409, in the caller's language).
// The job body is replaced by one that takes the experiment's lease, as the real one does, and holds its slot until
// the test lets it go, so the view is read while the job runs. With BullMQ workers: workers-cluster.test.ts.

const release = new Map<string, () => void>();
vi.mock("../../src/jobs/experiment-job.js", () => ({
  runExperimentJob: async (deps: JobDeps, uuid: string, _stop: AbortSignal, _slot: DeviceSlot) => {
    await deps.repo.acquireLease(uuid, deps.runnerId, deps.config.JOB_LEASE_S);
    await new Promise<void>((resolve) => release.set(uuid, resolve));
    await deps.repo.releaseLease(uuid, deps.runnerId);
    return "finished";
  },
}));

interface View {
  runner: string;
  workers: Array<{ id: string; status: string; slots: Array<{ device: string; busy: boolean; job: unknown }> }>;
  queues: Array<{ need: string; waiting: number; active: number }>;
  running: Array<{ experiment_id: number; owner_email: string; kind: string; worker: string; device: string | null }>;
}

describe("Operations API with the in-process runner", () => {
  let server: TestServer;
  let admin: Api;
  let adminKey: string;
  let member: UserWithKey;

  beforeAll(async () => {
    server = await startTestServer("pglite");
    const { auth } = server.services;
    const a = await auth.users.create({ email: "ops@hospital.example", password: "an administrator's password", role: "admin" });
    adminKey = (await auth.apiKeys.create(a.id, { scopes: ALL_KEY_SCOPES, name: "ops" })).key;
    admin = api(server.url, adminKey);
    member = await createUserWithKey(server, { email: "cardio@hospital.example" });
  });
  afterAll(async () => {
    for (const r of release.values()) r();
    await server?.teardown();
  });

  it("lists this server as the one runner, its slots and the job running in one, with its owner", async () => {
    const data = tabularZip();
    const zipPath = `${member.userId}/t/data.zip`;
    await server.services.bucket.write(zipPath, Readable.from(data.zip));
    const client = api(server.url, member.key);
    expect((await client.post("/v1/experiments", dataRequest(member.userId, 7, zipPath, data.dataCols))).status).toBe(202);
    let view: View | undefined;
    await waitFor("the job to run", async () => {
      view = (await admin.get("/v1/admin/workers")).body as View;
      return view.running.length === 1;
    });
    expect(view!.runner).toBe("inprocess");
    expect(view!.workers).toHaveLength(1);
    const runner = view!.workers[0];
    expect(runner.id).toBe(view!.running[0].worker);
    expect(view!.running[0]).toMatchObject({ experiment_id: 7, owner_email: "cardio@hospital.example", kind: "tabular", device: "cpu" });
    expect(runner.slots.filter((s) => s.busy)).toEqual([
      expect.objectContaining({ device: "cpu", job: { experiment_id: 7, owner_email: "cardio@hospital.example" } }),
    ]);
    expect(view!.queues.map((q) => q.need)).toEqual(["gpu", "cpu"]);
    expect(view!.queues.find((q) => q.need === "cpu")!.active).toBe(1);
    for (const r of release.values()) r();
  });

  it("is for administrators only", async () => {
    const res = await api(server.url, member.key).get("/v1/admin/workers");
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("admin_only");
  });

  it("has no worker to drain: 409 inprocess_runner, in Spanish for a Spanish caller", async () => {
    const res = await fetch(`${server.url}/v1/admin/workers/anything/drain`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "accept-language": "es" },
    });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("inprocess_runner");
    expect(body.error.message).toMatch(/^aquí los trabajos se ejecutan dentro del servidor/);
  });
});
