import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";

// The per-model setting of the unfamiliar-input check (src/experiments/input-check-mode.ts).

const settingSchema = z.object({
  experiment_id: z.number().int(),
  version: z.number().int().describe("the current model version"),
  available: z.boolean().describe("false: the model was built before unfamiliar-input checks (x-input-check: unchecked)"),
  mode: z.enum(["flag", "refuse"]).nullable(),
  checks: z.enum(["image", "table"]).nullable(),
  test_flagged_rate: z.number().nullable().describe("the share of the model's own test images or rows the check calls unfamiliar"),
});

export const inputCheckRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/models/{experiment_id}/input-check",
    auth: "any",
    scope: "read",
    summary: "The unfamiliar-input check of the current model version: flag (answer, x-input-check says unfamiliar) or refuse (422)",
    tags: ["models"],
    params: experimentIdParams,
    responses: { 200: { description: "the setting", schema: settingSchema } },
    handler: async ({ services, auth, params }) => ({ body: await services.inputCheckMode.get(auth, params.experiment_id) }),
  }),
  defineRoute({
    method: "put",
    path: "/v1/models/{experiment_id}/input-check",
    auth: "any",
    scope: "build",
    summary:
      "Set the unfamiliar-input check to flag or refuse: publishes a new model version (same model file) that /predict uses at once on every replica",
    tags: ["models"],
    params: experimentIdParams,
    body: z.object({ mode: z.enum(["flag", "refuse"]) }),
    responses: {
      200: { description: "the model already had that mode (no new version)", schema: settingSchema },
      201: { description: "a new current version with the mode set", schema: settingSchema },
      409: { description: "no published model, or one built before unfamiliar-input checks (rebuild it)" },
    },
    handler: async ({ services, auth, params, body }) => services.inputCheckMode.set(auth, params.experiment_id, body.mode, actorOf(auth)),
  }),
];
