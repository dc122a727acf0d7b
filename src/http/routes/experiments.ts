import { z } from "zod";
import { experimentRequestSchema } from "../../experiments/request.js";
import { STATUSES, isTerminal } from "../../experiments/state.js";
import { experimentSummary, experimentView } from "../../experiments/view.js";
import type { Services } from "../../services.js";
import { defineRoute } from "../route.js";

const idParams = z.object({ experiment_id: z.coerce.number().int().positive("must be a positive integer").max(2_147_483_647) });
const statusList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(z.enum(STATUSES, { error: `each status must be one of ${STATUSES.join(", ")}` })));

const SSE_POLL_MS = 500;
const SSE_KEEPALIVE_MS = 15_000;

async function view(services: Services, row: Parameters<typeof experimentView>[0]) {
  const model = await services.experiments.repo.latestModel(row.userId, row.experimentId);
  return experimentView(row, model && model.experimentUuid === row.id ? model : undefined);
}

export const experimentRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/experiments",
    auth: "any",
    summary: "Start an experiment: train (Builder) or test a published model on new data (Retrospective)",
    tags: ["experiments"],
    body: experimentRequestSchema,
    responses: { 200: { description: "the same request was posted before: that experiment" }, 202: { description: "accepted and queued" }, 409: { description: "experiment_id already used by a different request" } },
    handler: async ({ services, auth, body }) => {
      const { created, row } = await services.experiments.create(auth.userId, body);
      return { status: created ? 202 : 200, headers: { location: `/v1/experiments/${row.experimentId}` }, body: await view(services, row) };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments",
    auth: "any",
    summary: "List your experiments, newest first",
    tags: ["experiments"],
    query: z.object({
      status: statusList.optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
      offset: z.coerce.number().int().min(0).default(0),
    }),
    handler: async ({ services, auth, query }) => {
      const { rows, total } = await services.experiments.repo.list(auth.userId, { status: query.status, limit: query.limit, offset: query.offset });
      return { body: { data: rows.map(experimentSummary), total, limit: query.limit, offset: query.offset, has_more: query.offset + rows.length < total } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}",
    auth: "any",
    summary: "One experiment: status, progress, history, request, dataset report, metrics",
    tags: ["experiments"],
    params: idParams,
    handler: async ({ services, auth, params }) => ({ body: await view(services, await services.experiments.get(auth.userId, params.experiment_id)) }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/cancel",
    auth: "any",
    summary: "Cancel: a queued experiment at once; a running one's process is gone within seconds",
    tags: ["experiments"],
    params: idParams,
    handler: async ({ services, auth, params }) => ({ status: 202, body: await view(services, await services.experiments.cancel(auth.userId, params.experiment_id)) }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/logs",
    auth: "any",
    summary: "The job log (orchestrator lines and the pipeline's stderr), plain text",
    tags: ["experiments"],
    params: idParams,
    query: z.object({ tail_bytes: z.coerce.number().int().min(1).max(50 * 1024 * 1024).default(1024 * 1024) }),
    responses: { 200: { description: "log text", contentType: "text/plain" } },
    handler: async ({ services, auth, params, query, res }) => {
      const row = await services.experiments.get(auth.userId, params.experiment_id);
      res.type("text/plain; charset=utf-8").send(await services.experiments.readLog(row, query.tail_bytes));
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/events",
    auth: "any",
    summary: "Server-Sent Events: every state change (event: status) and progress/metric event, replayed from the start (or Last-Event-ID)",
    tags: ["experiments"],
    params: idParams,
    responses: { 200: { description: "text/event-stream", contentType: "text/event-stream" } },
    handler: async ({ services, auth, params, req, res }) => {
      const row = await services.experiments.get(auth.userId, params.experiment_id);
      const repo = services.experiments.repo;
      let after = Number(req.get("last-event-id") ?? 0) || 0;
      res.status(200).set({ "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
      res.flushHeaders();
      let open = true;
      req.on("close", () => (open = false));
      let lastWrite = Date.now();
      // Polls the events table: the writer may be another process (a BullMQ worker), so the database is the bus.
      while (open) {
        const batch = await repo.eventsAfter(row.id, after);
        let ended = false;
        for (const ev of batch) {
          res.write(`id: ${ev.seq}\nevent: ${ev.type}\ndata: ${JSON.stringify({ ...(ev.data as object), at: ev.at })}\n\n`);
          after = ev.seq;
          lastWrite = Date.now();
          if (ev.type === "status" && isTerminal((ev.data as { status: string }).status)) ended = true;
        }
        if (ended) break;
        if (Date.now() - lastWrite > SSE_KEEPALIVE_MS) {
          res.write(": keep-alive\n\n");
          lastWrite = Date.now();
        }
        if (batch.length < 500) await new Promise((r) => setTimeout(r, SSE_POLL_MS));
      }
      res.end();
    },
  }),
];
