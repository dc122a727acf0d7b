import { z } from "zod";
import { actorOf } from "../../audit/audit-log.js";
import type { MemberView } from "../../workspaces/members.service.js";
import { PERMISSIONS, permissionsOf, ROLES } from "../../workspaces/permissions.js";
import type { MyWorkspace } from "../../workspaces/workspace.service.js";
import { WORKSPACE_NAME_MAX } from "../../workspaces/workspace.service.js";
import { issuedLinkSchema } from "../response-schemas.js";
import { defineRoute } from "../route.js";
import { linkJson } from "./admin.js";

// Workspaces and their members for the dashboard (issue 50 items 2 and 5): a cookie session, the workspace in the
// path (not the X-Builder-Workspace header: these routes name the workspace they change). The members service
// decides who may do what (assertAllowed); a workspace the caller is not a member of is 404 workspace_not_found.

const role = z.enum(ROLES);
const wsParams = z.object({ id: z.string().min(1).max(100) });
const memberParams = wsParams.extend({ user_id: z.string().min(1).max(100) });
const notFound = { 404: { description: "workspace_not_found: no such workspace, or the caller is not a member" } };
const forbidden = { 403: { description: "missing_permission_members_manage: the caller's role may not manage members" } };
const lastOwner = {
  409: { description: "last_owner: the workspace's only owner; personal_workspace_owner: the owner of a personal workspace" },
};

const workspaceSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  personal: z.boolean().describe("the user's own workspace, made with the account"),
  role: role.describe("the caller's role in it"),
  permissions: z
    .array(z.enum(PERMISSIONS))
    .describe("what the caller's role allows here (docs/teams.md): the dashboard hides the controls it does not; the server still checks"),
  members: z.number().int(),
  created_at: z.string(),
});

const memberSchema = z.object({
  user_id: z.string().uuid(),
  email: z.string(),
  role,
  joined_at: z.string(),
});

const workspaceJson = (w: MyWorkspace): z.infer<typeof workspaceSchema> => ({
  id: w.id,
  name: w.name,
  personal: w.personal,
  role: w.role,
  permissions: permissionsOf(w.role),
  members: w.members,
  created_at: w.createdAt.toISOString(),
});

const memberJson = (m: MemberView): z.infer<typeof memberSchema> => ({
  user_id: m.userId,
  email: m.email,
  role: m.role,
  joined_at: m.joinedAt.toISOString(),
});

const name = z.string().max(WORKSPACE_NAME_MAX * 4);

export const workspaceRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/workspaces",
    auth: "session",
    summary: "The workspaces you belong to, with your role in each; your personal workspace first",
    tags: ["workspaces"],
    responses: { 200: { description: "your workspaces", schema: z.object({ data: z.array(workspaceSchema) }) } },
    handler: async ({ auth, services }) => ({ body: { data: (await services.workspaces.listMine(auth.userId)).map(workspaceJson) } }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/workspaces",
    auth: "session",
    summary: "Create a shared workspace; you are its owner",
    tags: ["workspaces"],
    body: z.object({ name }),
    responses: { 201: { description: "created", schema: workspaceSchema } },
    handler: async ({ auth, body, services }) => ({
      status: 201,
      body: workspaceJson(await services.workspaces.create(actorOf(auth), body.name)),
    }),
  }),
  defineRoute({
    method: "patch",
    path: "/v1/workspaces/{id}",
    auth: "session",
    summary: "Rename a workspace (owners)",
    tags: ["workspaces"],
    params: wsParams,
    body: z.object({ name }),
    responses: {
      200: { description: "renamed", schema: workspaceSchema },
      403: { description: "missing_permission_workspace_rename" },
      ...notFound,
    },
    handler: async ({ auth, params, body, services }) => ({
      body: workspaceJson(await services.workspaces.rename(actorOf(auth), params.id, body.name)),
    }),
  }),
  defineRoute({
    method: "delete",
    path: "/v1/workspaces/{id}",
    auth: "session",
    summary:
      "Delete a shared workspace and everything in it (owners): its members and keys at once, then its experiments, models, batches, files and objects, crash-safe in the background",
    tags: ["workspaces"],
    params: wsParams,
    responses: {
      202: {
        description: "the deletion has begun",
        schema: z.object({
          workspace_id: z.string(),
          status: z.literal("deleting"),
          experiments: z.number().int().describe("how many experiments are being deleted with it"),
        }),
      },
      403: { description: "missing_permission_workspace_delete" },
      ...notFound,
      409: { description: "personal_workspace: a personal workspace goes only with its owner's account (DELETE /v1/me)" },
    },
    handler: async ({ auth, params, services }) => {
      const { experiments } = await services.workspaceErasure.begin(actorOf(auth), params.id);
      return { status: 202, body: { workspace_id: params.id, status: "deleting" as const, experiments } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/workspaces/{id}/members",
    auth: "session",
    summary: "The workspace's members: e-mail, role and when they joined (any member may see them)",
    tags: ["workspaces"],
    params: wsParams,
    responses: { 200: { description: "members, oldest first", schema: z.object({ data: z.array(memberSchema) }) }, ...notFound },
    handler: async ({ auth, params, services }) => ({
      body: { data: (await services.members.list(auth.userId, params.id)).map(memberJson) },
    }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/workspaces/{id}/members",
    auth: "session",
    summary:
      "Add someone by e-mail with a role (owners): an account with that e-mail joins at once; an address with no account gets an invitation link, which Builder shows here and sends to no one. Accepting it creates the account and the membership",
    tags: ["workspaces"],
    params: wsParams,
    body: z.object({ email: z.string().min(1).max(320), role }),
    responses: {
      201: {
        description: "added (member) or invited (invitation: pass the link on; it is shown once)",
        schema: z.object({
          status: z.enum(["added", "invited"]),
          member: memberSchema.nullable(),
          invitation: issuedLinkSchema.extend({ email: z.string(), role }).nullable(),
        }),
      },
      400: { description: "invalid_request: not an e-mail address" },
      409: { description: "already_member: that account is a member already (change its role instead)" },
      ...forbidden,
      ...notFound,
    },
    handler: async ({ auth, params, body, services }) => {
      const outcome = await services.members.add(actorOf(auth), params.id, body);
      if ("added" in outcome)
        return { status: 201, body: { status: "added" as const, member: memberJson(outcome.added), invitation: null } };
      const { email, role: invitedAs } = outcome.invited;
      return {
        status: 201,
        headers: { "cache-control": "no-store" },
        body: {
          status: "invited" as const,
          member: null,
          invitation: { ...linkJson(outcome.invited, services.config), email, role: invitedAs },
        },
      };
    },
  }),
  defineRoute({
    method: "patch",
    path: "/v1/workspaces/{id}/members/{user_id}",
    auth: "session",
    summary: "Change a member's role (owners); the last owner cannot be demoted",
    tags: ["workspaces"],
    params: memberParams,
    body: z.object({ role }),
    responses: { 204: { description: "changed" }, ...forbidden, ...notFound, ...lastOwner },
    handler: async ({ auth, params, body, services }) => {
      await services.members.changeRole(actorOf(auth), params.id, params.user_id, body.role);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/workspaces/{id}/members/{user_id}",
    auth: "session",
    summary:
      "Remove a member (owners; yourself: leaving). The API keys they made in this workspace are revoked at once, on every replica; the last owner cannot be removed",
    tags: ["workspaces"],
    params: memberParams,
    responses: {
      200: { description: "removed", schema: z.object({ api_keys_revoked: z.number().int() }) },
      ...forbidden,
      ...notFound,
      ...lastOwner,
    },
    handler: async ({ auth, params, services }) => {
      const { apiKeysRevoked } = await services.members.remove(actorOf(auth), params.id, params.user_id);
      return { body: { api_keys_revoked: apiKeysRevoked } };
    },
  }),
  defineRoute({
    method: "post",
    path: "/v1/workspaces/{id}/leave",
    auth: "session",
    summary: "Leave a workspace; the API keys you made in it are revoked. The last owner cannot leave",
    tags: ["workspaces"],
    params: wsParams,
    responses: {
      200: { description: "left", schema: z.object({ api_keys_revoked: z.number().int() }) },
      ...notFound,
      ...lastOwner,
    },
    handler: async ({ auth, params, services }) => {
      const { apiKeysRevoked } = await services.members.leave(actorOf(auth), params.id);
      return { body: { api_keys_revoked: apiKeysRevoked } };
    },
  }),
];
