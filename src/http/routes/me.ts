import { z } from "zod";
import { defineRoute } from "../route.js";

export const meRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/me",
    auth: "any",
    summary: "Who am I: the user behind the API key (or dashboard session)",
    tags: ["account"],
    responses: { 200: { description: "the caller", schema: z.object({ user_id: z.string().uuid(), email: z.string() }) } },
    handler: async ({ auth }) => ({ body: { user_id: auth.userId, email: auth.email } }),
  }),
];
