import { z } from "zod";
import { experimentLabelsPatchSchema, experimentRequestSchema, SEARCH_MAX } from "../../experiments/request.js";
import { STATUSES } from "../../experiments/state.js";
import { ApiError, msg, detail, invalid } from "../../errors.js";
import { experimentIdParams } from "../params.js";
import { pageSecurityHeaders } from "../page-security.js";
import { actorOf } from "../../audit/audit-log.js";
import { defineRoute, type RouteRequest } from "../route.js";
import { preferredLanguage } from "../error-language.js";
import { translate } from "../../i18n/index.js";
import { experimentDeletionSchema, experimentListSchema, experimentSchema } from "../response-schemas.js";

/** The caller's language for the words an experiment stores (failure, dataset problems, warnings). */
const langOf = (req: RouteRequest) => preferredLanguage(req.get("accept-language"));

const LOG_HEADERS = pageSecurityHeaders();

const statusList = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
  )
  .pipe(z.array(z.enum(STATUSES, { error: invalid("validation.each_status_one_of", { list: STATUSES.join(", ") }) })));

/**
 * Last-Event-ID: the `id:` of the last event the client saw, a sequence number. Anything else is a 400: an
 * out-of-range number used to reach the database (a bigint error there) and answer an empty stream.
 */
function lastEventId(header: string | undefined): number {
  if (header === undefined || header.trim() === "") return 0;
  const value = header.trim();
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new ApiError(400, "invalid_request", msg("request.last_event_id"), [detail("last-event-id", msg("request.event_id"))]);
  }
  return Number(value);
}

export const experimentRoutes = [
  defineRoute({
    method: "post",
    path: "/v1/experiments",
    auth: "any",
    scope: "build",
    summary: "Start an experiment: train (Builder) or test a published model on new data (Retrospective)",
    tags: ["experiments"],
    body: experimentRequestSchema,
    responses: {
      200: { description: "the same request was posted before: that experiment", schema: experimentSchema },
      202: { description: "accepted and queued", schema: experimentSchema },
      409: { description: "experiment_id already used by a different request" },
    },
    handler: async ({ services, auth, body, req }) => {
      const { created, row } = await services.experiments.create(auth, body);
      if (created)
        await services.audit.record(actorOf(auth), "experiment_created", `experiment ${row.experimentId}`, {
          study_type: body.study_type,
          task: body.task,
        });
      return {
        status: created ? 202 : 200,
        headers: { location: `/v1/experiments/${row.experimentId}` },
        body: await services.experiments.view(row, langOf(req)),
      };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments",
    auth: "any",
    scope: "read",
    summary: "List your experiments, newest first",
    tags: ["experiments"],
    query: z.object({
      status: statusList.optional(),
      q: z
        .string()
        .trim()
        .max(SEARCH_MAX, invalid("validation.at_most_chars", { max: SEARCH_MAX }))
        // PostgreSQL text cannot hold U+0000: without this the search would fail in the query as a 500.
        .refine((q) => !q.includes("\u0000"), invalid("validation.no_nul"))
        .optional()
        .describe("text to look for, any case, in the name, description, dataset file name and label columns; combined with status"),
      limit: z.coerce.number().int().min(1).max(200).default(50),
      offset: z.coerce.number().int().min(0).default(0),
    }),
    responses: { 200: { description: "your experiments", schema: experimentListSchema } },
    handler: async ({ services, auth, query, req }) => ({ body: await services.experiments.list(auth, query, langOf(req)) }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}",
    auth: "any",
    scope: "read",
    summary: "One experiment: status, progress, history, request, dataset report, metrics",
    tags: ["experiments"],
    params: experimentIdParams,
    responses: { 200: { description: "the experiment", schema: experimentSchema } },
    handler: async ({ services, auth, params, req }) => ({
      body: await services.experiments.view(await services.experiments.get(auth, params.experiment_id), langOf(req)),
    }),
  }),
  defineRoute({
    method: "patch",
    path: "/v1/experiments/{experiment_id}",
    auth: "any",
    scope: "build",
    summary:
      "Name or describe an experiment: set name, description and/or intended_use (the model card's intended use); null clears one, an absent one is kept",
    tags: ["experiments"],
    params: experimentIdParams,
    body: experimentLabelsPatchSchema,
    responses: { 200: { description: "the experiment with its new labels", schema: experimentSchema } },
    handler: async ({ services, auth, params, body, req }) => ({
      body: await services.experiments.view(await services.experiments.editLabels(auth, params.experiment_id, body), langOf(req)),
    }),
  }),
  defineRoute({
    method: "delete",
    path: "/v1/experiments/{experiment_id}",
    auth: "any",
    scope: "build",
    summary:
      "Delete an experiment: cancelled if running, its models unpublished on every replica at once (/predict answers 404), then its model versions, reports, figures, logs and work folders removed; the dataset upload is kept (DELETE /v1/files)",
    tags: ["experiments"],
    params: experimentIdParams,
    responses: {
      202: {
        description: "being deleted: GET /v1/experiments/{experiment_id} answers 404 once its files are gone",
        schema: experimentDeletionSchema,
      },
    },
    handler: async ({ req, services, auth, params }) => {
      const row = await services.experiments.delete(auth, params.experiment_id);
      await services.audit.record(actorOf(auth), "experiment_deleted", `experiment ${row.experimentId}`);
      return {
        status: 202,
        body: {
          experiment_id: row.experimentId,
          status: "deleting" as const,
          message: translate(preferredLanguage(req.get("accept-language")), "experiments:apiNotice.deleting", { id: row.experimentId }),
        },
      };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/cancel",
    auth: "any",
    scope: "build",
    summary: "Cancel: a queued experiment at once; a running one's process is gone within seconds",
    tags: ["experiments"],
    params: experimentIdParams,
    responses: { 202: { description: "cancelled or cancelling", schema: experimentSchema } },
    handler: async ({ services, auth, params, req }) => ({
      status: 202,
      body: await services.experiments.view(await services.experiments.cancel(auth, params.experiment_id), langOf(req)),
    }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/logs",
    auth: "any",
    scope: "read",
    summary: "The job log (orchestrator lines and the pipeline's stderr), plain text",
    tags: ["experiments"],
    params: experimentIdParams,
    query: z.object({
      tail_bytes: z.coerce
        .number()
        .int()
        .min(1)
        .max(50 * 1024 * 1024)
        .default(1024 * 1024),
    }),
    responses: { 200: { description: "log text", contentType: "text/plain" } },
    handler: async ({ services, auth, params, query, res }) => {
      const row = await services.experiments.get(auth, params.experiment_id);
      // The same headers as the dashboard's pages: a log opened in a browser tab must not be framed or sniffed.
      res
        .set(LOG_HEADERS)
        .type("text/plain; charset=utf-8")
        .send(await services.experiments.readLog(row, query.tail_bytes, auth.workspace.storagePrefix));
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/events",
    auth: "any",
    scope: "read",
    summary:
      "Server-Sent Events: every state change (event: status) and progress/metric event, replayed from the start (or after Last-Event-ID or ?after=); at most EVENT_STREAMS_PER_USER open at once (429 too_many_streams), each ends after EVENT_STREAM_MAX_S with event: reconnect",
    tags: ["experiments"],
    params: experimentIdParams,
    // The same form as Last-Event-ID: digits only (z.coerce would take "1e3" or " 7").
    query: z.object({
      after: z
        .string()
        .regex(/^\d{1,16}$/, invalid("validation.event_id"))
        .transform(Number)
        .refine(Number.isSafeInteger, invalid("validation.event_id"))
        .optional(),
    }),
    responses: {
      200: { description: "text/event-stream", contentType: "text/event-stream" },
      429: { description: "too_many_streams: EVENT_STREAMS_PER_USER streams already open" },
    },
    handler: async ({ services, auth, params, query, req, res }) => {
      // The header wins over ?after=: a browser's EventSource sends it on every reconnect, newer than the URL's.
      const header = req.get("last-event-id");
      const after = header !== undefined && header.trim() !== "" ? lastEventId(header) : (query.after ?? 0);
      const row = await services.experiments.get(auth, params.experiment_id);
      const release = services.experiments.openEventStream(auth.userId);
      const gone = new AbortController();
      res.on("close", () => gone.abort());
      // A client that left while the experiment was being looked up has already closed: no event will say so.
      if (!res.socket || res.socket.destroyed) gone.abort();
      try {
        res
          .status(200)
          .set({ "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
        res.flushHeaders();
        for await (const item of services.experiments.events(row, after, gone.signal)) {
          if ("keepAlive" in item) res.write(": keep-alive\n\n");
          else if ("lifetimeEnded" in item)
            res.write(
              `event: reconnect\ndata: ${JSON.stringify({ reason: "max_lifetime", last_event_id: item.lifetimeEnded.lastEventId })}\n\n`,
            );
          else
            res.write(
              `id: ${item.event.seq}\nevent: ${item.event.type}\ndata: ${JSON.stringify({ ...(item.event.data as object), at: item.event.at })}\n\n`,
            );
        }
      } finally {
        release();
      }
      res.end();
    },
  }),
];
