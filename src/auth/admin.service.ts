import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import { ApiError, msg, detail } from "../errors.js";
import { linkState, type AccountLink, type AdminRepository, type LinkKind, type LinkState, type ManagedUser } from "./admin.repository.js";
import type { ApiKeyService } from "./api-key.service.js";
import { hashPassword, randomToken, sha256Hex } from "./secrets.js";
import { checkedEmail, normaliseEmail, passwordProblem, type Role } from "./user.service.js";

export type { AccountLink, ManagedUser } from "./admin.repository.js";

// What administrators do (issue 38 item 4): invite people with a one-time link, disable and enable accounts, hand
// over a one-time password-reset link, change roles. Builder has no mail server (hospitals often have none for it),
// so a link is shown once to the administrator, who passes it on; only its SHA-256 is stored, as for API keys.

/** How long links stay usable: an invitation may wait a long weekend, a reset link is for today. */
export const INVITATION_TTL_HOURS = 72;
export const RESET_TTL_HOURS = 24;

/** The dashboard pages that open the links. The token is in the fragment: browsers never send it to a server. */
export const LINK_PATHS: Record<LinkKind, string> = { invitation: "/invite", password_reset: "/reset-password" };

export interface IssuedLink {
  link: AccountLink;
  /** The secret, here and never again. */
  token: string;
  /** /invite#<token> or /reset-password#<token>, to put after the server's address. */
  path: string;
}

/** 403 admin_only unless the caller is an administrator (the route runner asks it of every adminOnly route). */
export function requireAdmin(auth: { role: Role } | null): void {
  if (auth?.role !== "admin") throw new ApiError(403, "admin_only", msg("auth.admin_only"));
}

function refusal(kind: LinkKind, state: Exclude<LinkState, "usable">): ApiError {
  const code = `${kind === "invitation" ? "invitation" : "reset_link"}_${state === "unknown" ? "invalid" : state}`;
  return new ApiError(state === "unknown" ? 404 : 410, code, msg(`auth.${kind}.${state}`));
}

export class AdminService {
  constructor(
    private readonly deps: {
      repo: AdminRepository;
      apiKeys: ApiKeyService;
      audit: AuditLog;
    },
  ) {}

  listUsers(): Promise<ManagedUser[]> {
    return this.deps.repo.listUsers();
  }

  async invite(actor: AuditActor, input: { email?: string | null; role: Role }): Promise<IssuedLink> {
    const email = input.email?.trim() ? normaliseEmail(input.email) : null;
    const issued = await this.issue("invitation", { role: input.role, email, createdBy: actor.userId }, INVITATION_TTL_HOURS);
    await this.deps.audit.record(actor, "invitation_created", `invitation ${issued.link.id}`, { role: input.role });
    return issued;
  }

  /**
   * An invitation into a workspace for an address with no account yet (issue 50): the account it creates is an
   * ordinary member of the server and joins the workspace with `workspaceRole`. The members service checks the
   * inviter's permission and records the audit entry; the link is shown to the inviter, as an administrator's is.
   */
  async inviteToWorkspace(actor: AuditActor, input: { email: string; workspaceId: string; workspaceRole: string }): Promise<IssuedLink> {
    return this.issue(
      "invitation",
      {
        role: "member",
        email: normaliseEmail(input.email),
        createdBy: actor.userId,
        workspaceId: input.workspaceId,
        workspaceRole: input.workspaceRole,
      },
      INVITATION_TTL_HOURS,
    );
  }

  pendingInvitations(): Promise<AccountLink[]> {
    return this.deps.repo.pendingInvitations();
  }

  async revokeInvitation(actor: AuditActor, id: string): Promise<AccountLink> {
    const revoked = await this.deps.repo.revokeLink("invitation", id);
    if (!revoked) throw new ApiError(404, "not_found", msg("auth.no_pending_invitation"));
    await this.deps.audit.record(actor, "invitation_revoked", `invitation ${id}`);
    return revoked;
  }

  /** What the invitation page shows before the form: for whom (the note), until when, and (a reset) the keys that would keep working. */
  async checkLink(kind: LinkKind, token: string): Promise<AccountLink & { userEmail?: string; activeApiKeys?: number }> {
    const link = await this.deps.repo.findLink(kind, sha256Hex(token));
    const state = linkState(link);
    if (state !== "usable") throw refusal(kind, state);
    if (kind === "password_reset") {
      const user = await this.deps.repo.findUser(link!.userId!);
      if (!user || user.erasingAt) throw refusal(kind, "unknown");
      return { ...link!, userEmail: user.email, activeApiKeys: await this.deps.apiKeys.countActive(user.id) };
    }
    return link!;
  }

  /** Creates the invited account and spends the invitation; a second use (or an expired one) is refused. */
  async acceptInvitation(input: { token: string; email: string; password: string }): Promise<{ id: string; email: string; role: Role }> {
    const email = checkedEmail(input);
    const passwordHash = await hashPassword(input.password);
    const outcome = await this.deps.repo.acceptInvitation(sha256Hex(input.token), { email, passwordHash });
    if ("refused" in outcome) throw refusal("invitation", outcome.refused);
    if (outcome.ok === "email_taken")
      throw new ApiError(409, "email_taken", msg("auth.email_taken_signup", { email }), [
        detail("email", msg("detail.already_has_account")),
      ]);
    const user = outcome.ok;
    const link = await this.deps.repo.findLink("invitation", sha256Hex(input.token));
    await this.deps.audit.record({ userId: user.id, via: "session" }, "invitation_used", `invitation ${link?.id}`, {
      role: user.role,
      invited_by: link?.createdBy ?? null,
      ...(link?.workspaceId ? { workspace_id: link.workspaceId, workspace_role: link.workspaceRole } : {}),
    });
    if (link?.workspaceId) {
      await this.deps.audit.record({ userId: user.id, via: "session", workspaceId: link.workspaceId }, "member_added", `user ${user.id}`, {
        role: link.workspaceRole,
        invited_by: link.createdBy ?? null,
      });
    }
    return user;
  }

  async disable(actor: AuditActor, userId: string): Promise<ManagedUser> {
    if (userId === actor.userId) throw new ApiError(409, "cannot_disable_self", msg("auth.cannot_disable_self"));
    const user = await this.changeAccess(userId, { disabledAt: new Date() }, "disable");
    // This process stops honouring the user's keys now; the users table's trigger tells the other processes.
    await this.deps.apiKeys.forgetCachedKeysOf(userId);
    await this.deps.audit.record(actor, "user_disabled", `user ${userId}`);
    return user;
  }

  async enable(actor: AuditActor, userId: string): Promise<ManagedUser> {
    const user = await this.changeAccess(userId, { disabledAt: null }, "enable");
    await this.deps.apiKeys.forgetCachedKeysOf(userId);
    await this.deps.audit.record(actor, "user_enabled", `user ${userId}`);
    return user;
  }

  async setRole(actor: AuditActor, userId: string, role: Role): Promise<ManagedUser> {
    const before = await this.deps.repo.findUser(userId);
    const user = await this.changeAccess(userId, { role }, "demote");
    await this.deps.apiKeys.forgetCachedKeysOf(userId);
    if (before?.role !== role) await this.deps.audit.record(actor, "role_changed", `user ${userId}`, { from: before?.role, to: role });
    return user;
  }

  /** A one-time link that sets the user's password (24 h); earlier links for the user stop working. */
  async issuePasswordReset(actor: AuditActor, userId: string): Promise<IssuedLink & { user: ManagedUser }> {
    const user = await this.deps.repo.findUser(userId);
    if (!user || user.erasingAt) throw new ApiError(404, "not_found", msg("auth.no_user_with_id"));
    await this.deps.repo.revokePendingResets(userId);
    const issued = await this.issue("password_reset", { userId, createdBy: actor.userId }, RESET_TTL_HOURS);
    await this.deps.audit.record(actor, "password_reset_issued", `user ${userId}`, { link_id: issued.link.id });
    return { ...issued, user };
  }

  /**
   * Sets the new password, spends the link and signs the user out everywhere. A new password does not stop the
   * account's API keys (issue 48 finding 13): `revokeApiKeys` revokes them in the same step, and the audit entry
   * says how many went or stayed.
   */
  async useReset(input: {
    token: string;
    password: string;
    revokeApiKeys: boolean;
  }): Promise<{ id: string; email: string; apiKeysRevoked: number }> {
    const weak = passwordProblem(input.password);
    if (weak) throw new ApiError(400, "invalid_request", weak, [detail("password", weak)]);
    const outcome = await this.deps.repo.useReset(sha256Hex(input.token), await hashPassword(input.password));
    if ("refused" in outcome) throw refusal("password_reset", outcome.refused);
    if (!outcome.ok) throw refusal("password_reset", "unknown");
    const { id } = outcome.ok;
    const apiKeysRevoked = input.revokeApiKeys ? await this.deps.apiKeys.revokeAllOf(id) : 0;
    const details = input.revokeApiKeys ? { api_keys_revoked: apiKeysRevoked } : { api_keys_kept: await this.deps.apiKeys.countActive(id) };
    await this.deps.audit.record({ userId: id, via: "session" }, "password_reset_used", `user ${id}`, details);
    return { ...outcome.ok, apiKeysRevoked };
  }

  /** Whether `userId` may leave (erase their account) without leaving other people with no administrator. */
  async isLastAdmin(userId: string, role: Role): Promise<boolean> {
    if (role !== "admin") return false;
    const others = (await this.deps.repo.listUsers()).filter((u) => u.id !== userId && !u.erasingAt);
    return others.length > 0 && (await this.deps.repo.otherActiveAdmins(userId)) === 0;
  }

  private async changeAccess(
    userId: string,
    change: { disabledAt?: Date | null; role?: Role },
    what: "disable" | "enable" | "demote",
  ): Promise<ManagedUser> {
    const outcome = await this.deps.repo.changeAccess(userId, change);
    if (!outcome) throw new ApiError(404, "not_found", msg("auth.no_user_with_id"));
    if (outcome === "last_admin") {
      throw new ApiError(409, "last_admin", msg(what === "disable" ? "auth.last_admin_disable" : "auth.last_admin_role"));
    }
    return outcome;
  }

  private async issue(
    kind: LinkKind,
    values: { role?: Role; email?: string | null; userId?: string; createdBy: string; workspaceId?: string; workspaceRole?: string },
    ttlHours: number,
  ): Promise<IssuedLink> {
    const token = randomToken(32);
    const link = await this.deps.repo.insertLink({
      kind,
      tokenHash: sha256Hex(token),
      role: values.role ?? "member",
      email: values.email ?? null,
      userId: values.userId ?? null,
      createdBy: values.createdBy,
      workspaceId: values.workspaceId ?? null,
      workspaceRole: values.workspaceRole ?? null,
      expiresAt: new Date(Date.now() + ttlHours * 3600_000),
    });
    return { link, token, path: `${LINK_PATHS[kind]}#${token}` };
  }
}
