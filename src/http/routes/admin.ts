import { z } from "zod";
import type { AccountLink, IssuedLink, ManagedUser } from "../../auth/admin.service.js";
import { actorOf } from "../../audit/audit-log.js";
import type { Config } from "../../config.js";
import { defineRoute } from "../route.js";
import { invitationSchema, issuedLinkSchema, managedUserSchema } from "../response-schemas.js";
import { invalid } from "../../errors.js";

// Settings → Users (issue 38 item 4): administrators list, invite, disable and enable users, change roles and hand
// over password-reset links. A session or an API key of an administrator; anyone else gets 403 admin_only.

const role = z.enum(["admin", "member"]);
const userParams = z.object({ id: z.string().uuid(invalid("validation.user_id")) });
const refused = { 403: { description: "admin_only: the caller is not an administrator" } };

function userJson(u: ManagedUser): z.infer<typeof managedUserSchema> {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    status: u.erasingAt ? "erasing" : u.disabledAt ? "disabled" : "active",
    created_at: u.createdAt.toISOString(),
    disabled_at: u.disabledAt?.toISOString() ?? null,
  };
}

function invitationJson(l: AccountLink): z.infer<typeof invitationSchema> {
  return {
    id: l.id,
    email: l.email,
    role: l.role as "admin" | "member",
    created_at: l.createdAt.toISOString(),
    expires_at: l.expiresAt.toISOString(),
    created_by: l.createdBy,
  };
}

export function linkJson(issued: IssuedLink, config: Config): z.infer<typeof issuedLinkSchema> {
  const base = config.PUBLIC_URL?.endsWith("/") ? config.PUBLIC_URL.slice(0, -1) : config.PUBLIC_URL;
  return {
    token: issued.token,
    path: issued.path,
    url: base ? `${base}${issued.path}` : null,
    expires_at: issued.link.expiresAt.toISOString(),
  };
}

const NO_STORE = { "cache-control": "no-store" };

export const adminRoutes = [
  defineRoute({
    method: "get",
    path: "/v1/admin/users",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: every account, oldest first, with its role and whether it is active, disabled or being erased",
    tags: ["admin"],
    responses: { 200: { description: "the accounts", schema: z.object({ data: z.array(managedUserSchema) }) }, ...refused },
    handler: async ({ services }) => ({ body: { data: (await services.admin.listUsers()).map(userJson) } }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/admin/users/{id}/disable",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: disable an account; its sessions end and its API keys stop working at once, on every server",
    tags: ["admin"],
    params: userParams,
    responses: {
      200: { description: "the account, now disabled", schema: managedUserSchema },
      ...refused,
      404: { description: "not_found" },
      409: { description: "cannot_disable_self, or last_admin: the last active administrator" },
    },
    handler: async ({ auth, params, services }) => ({ body: userJson(await services.admin.disable(actorOf(auth), params.id)) }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/admin/users/{id}/enable",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: enable a disabled account again (its owner signs in again; its API keys work again)",
    tags: ["admin"],
    params: userParams,
    responses: {
      200: { description: "the account, now active", schema: managedUserSchema },
      ...refused,
      404: { description: "not_found" },
    },
    handler: async ({ auth, params, services }) => ({ body: userJson(await services.admin.enable(actorOf(auth), params.id)) }),
  }),
  defineRoute({
    method: "put",
    path: "/v1/admin/users/{id}/role",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: make an account an administrator or a member",
    tags: ["admin"],
    params: userParams,
    body: z.object({ role }),
    responses: {
      200: { description: "the account with its new role", schema: managedUserSchema },
      ...refused,
      404: { description: "not_found" },
      409: { description: "last_admin: the last active administrator cannot become a member" },
    },
    handler: async ({ auth, params, body, services }) => ({
      body: userJson(await services.admin.setRole(actorOf(auth), params.id, body.role)),
    }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/admin/users/{id}/password-reset",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary:
      "Administrators: a one-time link (24 h) that lets the user set a new password; shown in this response only. Earlier links for the user stop working",
    tags: ["admin"],
    params: userParams,
    responses: {
      201: {
        description: "the link: pass it to the user (Builder sends no email)",
        schema: issuedLinkSchema.extend({ user_id: z.string() }),
      },
      ...refused,
      404: { description: "not_found" },
    },
    handler: async ({ auth, params, services }) => {
      const issued = await services.admin.issuePasswordReset(actorOf(auth), params.id);
      return { status: 201, headers: NO_STORE, body: { ...linkJson(issued, services.config), user_id: issued.user.id } };
    },
  }),
  defineRoute({
    method: "get",
    path: "/v1/admin/invitations",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: invitations not yet used, withdrawn or expired, newest first",
    tags: ["admin"],
    responses: { 200: { description: "pending invitations", schema: z.object({ data: z.array(invitationSchema) }) }, ...refused },
    handler: async ({ services }) => ({ body: { data: (await services.admin.pendingInvitations()).map(invitationJson) } }),
  }),
  defineRoute({
    method: "post",
    path: "/v1/admin/invitations",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: invite someone: a one-time link (72 h) to create their account, shown in this response only",
    tags: ["admin"],
    body: z.object({
      email: z.email(invalid("detail.invalid_email")).max(320).nullable().optional().describe("whom it is for: pre-fills the form"),
      role: role.default("member"),
    }),
    responses: {
      201: {
        description: "the invitation and its link: pass it on (Builder sends no email)",
        schema: invitationSchema.extend(issuedLinkSchema.shape),
      },
      ...refused,
    },
    handler: async ({ auth, body, services }) => {
      const issued = await services.admin.invite(actorOf(auth), { email: body.email, role: body.role });
      return { status: 201, headers: NO_STORE, body: { ...invitationJson(issued.link), ...linkJson(issued, services.config) } };
    },
  }),
  defineRoute({
    method: "delete",
    path: "/v1/admin/invitations/{id}",
    auth: "any",
    scope: "admin",
    adminOnly: true,
    summary: "Administrators: withdraw a pending invitation; its link stops working",
    tags: ["admin"],
    params: z.object({ id: z.string().uuid(invalid("validation.invitation_id")) }),
    responses: {
      200: { description: "the withdrawn invitation", schema: invitationSchema },
      ...refused,
      404: { description: "not_found" },
    },
    handler: async ({ auth, params, services }) => ({
      body: invitationJson(await services.admin.revokeInvitation(actorOf(auth), params.id)),
    }),
  }),
];
