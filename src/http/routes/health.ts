import { z } from "zod";
import { ApiError } from "../../errors.js";
import { defineRoute } from "../route.js";

export const healthRoutes = [
  defineRoute({
    method: "get",
    path: "/healthz",
    auth: "none",
    summary: "Liveness: the process is up",
    tags: ["operations"],
    responses: { 200: { description: "up", schema: z.object({ status: z.literal("ok") }) } },
    handler: async () => ({ body: { status: "ok" } }),
  }),
  defineRoute({
    method: "get",
    path: "/readyz",
    auth: "none",
    summary: "Readiness: the database answers",
    tags: ["operations"],
    responses: { 200: { description: "ready", schema: z.object({ status: z.literal("ready"), database: z.string() }) } },
    handler: async ({ services }) => {
      if (!(await services.database.ping())) throw new ApiError(503, "not_ready", "the database does not answer");
      return { body: { status: "ready", database: services.database.kind } };
    },
  }),
];
