import { z } from "zod";
import { pageSecurityHeaders } from "../page-security.js";
import { defineRoute } from "../route.js";
import { AUDIT_ACTIONS } from "../../audit/audit-log.js";

const CSV_HEADERS = pageSecurityHeaders();

const auditEntry = z.object({
  seq: z.number(),
  at: z.string().describe("ISO 8601"),
  action: z.string().describe(`one of ${AUDIT_ACTIONS.join(", ")}; new actions may be added, none is renamed`),
  via: z.string().describe("api_key, session, cli or system"),
  target: z.string().nullable().describe('what it acted on: "experiment 3", "key bld_1a2B3c4D"'),
  details: z.record(z.string(), z.unknown()),
});

export const auditRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/audit",
    auth: "any",
    scope: "read",
    summary: "Your audit log, newest first: who did what and when (append-only; no patient data). /v1/audit.csv downloads all of it",
    tags: ["account"],
    query: z.object({
      limit: z.coerce.number().int().min(1).max(500).default(100),
      offset: z.coerce.number().int().min(0).default(0),
    }),
    responses: {
      200: {
        description: "your entries",
        schema: z.object({ data: z.array(auditEntry), total: z.number(), limit: z.number(), offset: z.number(), has_more: z.boolean() }),
      },
    },
    handler: async ({ services, auth, query }) => ({ body: await services.audit.list(auth, query) }),
  }),
  defineRoute({
    method: "get",
    path: "/v1/audit.csv",
    auth: "any",
    scope: "read",
    summary: "Your whole audit log as CSV, oldest first (seq, at, action, via, target, details)",
    tags: ["account"],
    responses: { 200: { description: "CSV", contentType: "text/csv" } },
    handler: async ({ services, auth, res }) => {
      res
        .set({ ...CSV_HEADERS, "content-disposition": 'attachment; filename="builder-audit.csv"', "cache-control": "no-store" })
        .type("text/csv; charset=utf-8")
        .send(await services.audit.csv(auth));
    },
  }),
];
