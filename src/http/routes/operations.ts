import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { defineRoute } from "../route.js";

// The Operations page (issue 54 item 2): administrators see the workers, their slots, the queue of each kind of
// need and the running jobs, and drain or resume a worker. A session or an API key of an administrator.

const need = z.enum(["gpu", "cpu"]);
const jobRef = z.object({
  experiment_id: z.number().int(),
  owner_email: z.string().nullable().describe("null when the owner's account is gone"),
});

const workerSchema = z.object({
  id: z.string().describe("the runner id (host:pid:random), as in an experiment's lease"),
  host: z.string(),
  pid: z.number().int(),
  status: z
    .enum(["active", "draining", "drained", "lost", "stopped"])
    .describe(
      "active: takes jobs; draining: finishes what it runs, takes nothing new; drained: idle and takes nothing; lost: stopped sending heartbeats (its jobs are taken over); stopped: exited",
    ),
  drain_requested: z.boolean(),
  started_at: z.string(),
  heartbeat_at: z.string(),
  queues: z.array(need).describe("the queues it takes jobs from"),
  gpus: z.array(
    z.object({
      index: z.string(),
      name: z.string(),
      memory_mib: z.number().nullable(),
      simulated: z.boolean().optional().describe("declared with BUILDER_SIMULATE_GPUS: placed on like a GPU, trains on the CPU"),
    }),
  ),
  slots: z.array(
    z.object({
      slot: z.number().int(),
      device: z.enum(["cuda", "cpu"]),
      gpu_index: z.string().nullable(),
      busy: z.boolean(),
      job: jobRef.nullable(),
      since: z.string().nullable(),
    }),
  ),
});

const operationsSchema = z.object({
  runner: z.enum(["inprocess", "bullmq"]).describe("inprocess: the server runs jobs itself; bullmq: `./builder worker` processes do"),
  checked_at: z.string(),
  queues: z.array(
    z.object({
      need,
      waiting: z.number().int().describe("jobs waiting for a worker with a free slot of this kind"),
      active: z.number().int().describe("jobs a worker has taken"),
    }),
  ),
  workers: z.array(workerSchema),
  running: z.array(
    jobRef.extend({
      kind: z.string(),
      status: z.string(),
      attempt: z.number().int(),
      worker: z.string().describe("the id of the runner that holds its lease"),
      slot: z.number().int().nullable(),
      device: z.enum(["cuda", "cpu"]).nullable(),
      since: z.string().nullable(),
    }),
  ),
});

const target = z.object({ id: z.string().min(1).max(300).describe("a worker's id, or a host name: every worker on that host") });
const changed = z.object({ workers: z.array(z.string()).describe("the ids of the workers it applies to") });
const refused = { 403: { description: "admin_only: the caller is not an administrator" } };
const drainErrors = {
  ...refused,
  404: { description: "not_found: no running worker has that id or host name" },
  409: { description: "inprocess_runner: this server runs its jobs itself; there are no workers" },
};

export const operationsRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/admin/workers",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: the workers with their GPUs and slots, the depth of the GPU and CPU queues, and the running jobs",
    tags: ["admin"],
    responses: { 200: { description: "the cluster now", schema: operationsSchema }, ...refused },
    handler: async ({ services }) => ({ headers: { "cache-control": "no-store" }, body: await services.operations.view() }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/admin/workers/{id}/drain",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary:
      "Administrators: drain a worker (or every worker on a host): it finishes the jobs it runs and takes nothing new, within a couple of seconds",
    tags: ["admin"],
    params: target,
    responses: { 200: { description: "the workers asked to drain", schema: changed }, ...drainErrors },
    handler: async ({ auth, params, services }) => {
      const workers = await services.operations.drain(params.id);
      await services.audit.record(actorOf(auth), "worker_drain_requested", params.id, { workers: workers.length });
      return { body: { workers } };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/admin/workers/{id}/resume",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: a drained or draining worker (or every worker on a host) takes jobs again",
    tags: ["admin"],
    params: target,
    responses: { 200: { description: "the workers resumed", schema: changed }, ...drainErrors },
    handler: async ({ auth, params, services }) => {
      const workers = await services.operations.resume(params.id);
      await services.audit.record(actorOf(auth), "worker_resumed", params.id, { workers: workers.length });
      return { body: { workers } };
    },
  }),
];
