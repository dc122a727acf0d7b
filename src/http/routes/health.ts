import { z } from "zod";
import { ApiError, msg } from "../../errors.js";
import { defineRoute } from "../route.js";

const deviceSlotSchema = z.object({
  slot: z.number().int(),
  device: z.enum(["cuda", "cpu"]),
  gpu: z.object({ index: z.string(), id: z.string(), name: z.string(), memory_mib: z.number().nullable() }).nullable(),
  threads: z.number().int(),
  busy: z.boolean(),
});

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
    summary: "Readiness: the database answers; with the in-process runner, the devices its jobs run on",
    tags: ["operations"],
    responses: {
      200: {
        description: "ready",
        schema: z.object({
          status: z.literal("ready"),
          database: z.string(),
          runner: z.string().optional(),
          devices: z.array(deviceSlotSchema).optional(),
        }),
      },
    },
    handler: async ({ services }) => {
      if (!(await services.database.ping())) throw new ApiError(503, "not_ready", msg("request.database_down"));
      const runner = services.runner;
      return { body: { status: "ready", database: services.database.kind, runner: runner?.kind, devices: runner?.slots?.describe() } };
    },
  }),
];
