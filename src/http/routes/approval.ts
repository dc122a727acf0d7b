import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import { invalid } from "../../errors.js";
import type { AuthInfo } from "../../auth/index.js";
import { experimentIdParams } from "../params.js";
import { defineRoute } from "../route.js";

// A second pair of eyes (issue 50 item 4, docs/teams.md): the workspace's setting and a model version's approval.

const approvalSchema = z.object({
  experiment_id: z.number().int(),
  version: z.number().int().describe("the current model version, the one /predict answers with"),
  required: z.boolean().describe("the workspace asks for approval before a version answers keys other than its builder's"),
  approved: z.boolean(),
  approved_by: z.string().nullable().describe("the approver's e-mail; null when not approved or when the approver's account was erased"),
  former_member: z.boolean().describe("approved by someone whose account has since been erased"),
  approved_at: z.union([z.string(), z.date()]).nullable().describe("ISO 8601"),
  intended_use: z.string().nullable().describe("the intended use the approver approved the version for"),
});

const stateSchema = approvalSchema.extend({
  built_by_you: z.boolean(),
  can_approve: z.boolean().describe("the caller may approve it: a reviewer or owner who did not build it, and not yet approved"),
});

/** The request's workspace (a key's own; from the dashboard, its X-Builder-Workspace header or the personal one). */
const caller = (auth: AuthInfo) => ({ actor: actorOf(auth), workspaceId: auth.workspace.id });

export const approvalRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/experiments/{experiment_id}/approval",
    auth: "any",
    scope: "read",
    summary:
      "The approval of the experiment's current model version: whether the workspace requires it, who approved it, when, for which intended use",
    tags: ["models"],
    params: experimentIdParams,
    responses: { 200: { description: "the approval", schema: stateSchema } },
    handler: async ({ services, auth, params }) => ({
      body: await services.approval.state(caller(auth), params.experiment_id),
    }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/experiments/{experiment_id}/approval",
    auth: "any",
    // A sign-off is a person's act: a program's key (predict, read, build) cannot approve; an owner's admin key can.
    scope: "admin",
    summary:
      "Approve the current model version for an intended use (a reviewer or owner who did not build it): in a workspace that requires approval it then answers every key; a new version needs approval again",
    tags: ["models"],
    params: experimentIdParams,
    body: z.object({
      intended_use: z
        .string()
        .trim()
        .min(1, invalid("validation.not_blank"))
        .max(2000, invalid("validation.at_most_chars", { max: 2000 }))
        .describe("what the model is approved to be used for"),
    }),
    responses: {
      201: { description: "approved", schema: approvalSchema },
      403: { description: "missing_permission_model_approve (your role), or model_version_own_approval (you built it)" },
      409: { description: "model_version_already_approved" },
    },
    handler: async ({ services, auth, params, body }) => ({
      status: 201,
      body: await services.approval.approve(caller(auth), params.experiment_id, body.intended_use),
    }),
  }),
  defineRoute({
    method: "patch",
    path: "/v1/workspaces/{workspace_id}/settings",
    auth: "any",
    scope: "admin",
    summary:
      "An owner's settings of the workspace: require_approval (a second pair of eyes before a model version answers other members' keys)",
    tags: ["workspaces"],
    params: z.object({ workspace_id: z.uuid(invalid("validation.workspace_id")) }),
    body: z.object({ require_approval: z.boolean() }).strict(),
    responses: { 200: { description: "the settings", schema: z.object({ id: z.string(), require_approval: z.boolean() }) } },
    handler: async ({ services, auth, params, body }) => ({
      body: await services.approval.setRequireApproval(actorOf(auth), params.workspace_id, body.require_approval),
    }),
  }),
];
