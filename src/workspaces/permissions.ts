// The one table of what each role in a workspace may do (issue 50 item 2, docs/teams.md). Services ask it through
// assertAllowed; routes never decide, so every route, the chat's tools and the CLI obey the same rule.
import { ApiError, msg } from "../errors.js";

export const ROLES = ["owner", "editor", "reviewer", "viewer"] as const;
export type WorkspaceRole = (typeof ROLES)[number];

export const PERMISSIONS = [
  "experiment.read",
  "experiment.build",
  "experiment.delete",
  "dataset.upload",
  "dataset.delete",
  "batch.run",
  "operating_point.set",
  "intended_use.write",
  "review.write",
  "model.approve",
  "key.manage",
  "members.manage",
  "workspace.rename",
  "workspace.delete",
  "workspace.settings",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READ_ONLY: readonly Permission[] = ["experiment.read"];
const REVIEW: readonly Permission[] = [...READ_ONLY, "intended_use.write", "review.write", "model.approve"];
const EDIT: readonly Permission[] = [
  ...READ_ONLY,
  "experiment.build",
  "experiment.delete",
  "dataset.upload",
  "dataset.delete",
  "batch.run",
  "operating_point.set",
];

/** role → what it may do. An owner may do everything; the others are listed, so a new permission is denied by default. */
export const ROLE_PERMISSIONS: Readonly<Record<WorkspaceRole, ReadonlySet<Permission>>> = {
  owner: new Set(PERMISSIONS),
  editor: new Set(EDIT),
  reviewer: new Set(REVIEW),
  viewer: new Set(READ_ONLY),
};

/** "experiment.read" -> "experiment_read", as the catalog's keys and the error codes write a permission. */
type Underscored<P extends string> = P extends `${infer A}.${infer B}` ? `${A}_${B}` : P;

export interface WorkspaceMember {
  workspaceId: string;
  userId: string;
  role: WorkspaceRole;
}

/**
 * A known resource the member's role does not allow: 403 with a code naming the missing permission
 * (`missing_permission_experiment_delete`), mapped to HTTP once at the edge like every ApiError.
 */
export class PermissionDeniedError extends ApiError {
  constructor(
    public readonly permission: Permission,
    public readonly role: WorkspaceRole,
  ) {
    // The role and the action in words ("lector", "eliminar experimentos"), not the code's names; the code keeps them.
    // The compiler checks that every permission has its words in the catalog (msg's key type).
    const action = `workspace.action.${permission.replace(".", "_")}` as `workspace.action.${Underscored<Permission>}`;
    super(
      403,
      `missing_permission_${permission.replace(".", "_")}`,
      msg("workspace.permission_denied", { role: msg(`workspace.role_name.${role}`), permission: msg(action) }),
      {
        permission,
        role,
      },
    );
  }
}

export function isAllowed(role: WorkspaceRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role]?.has(permission) ?? false;
}

/** What a role may do, in the table's order: the dashboard shows or hides its controls by this list (GET /v1/workspaces). */
export function permissionsOf(role: WorkspaceRole): Permission[] {
  return PERMISSIONS.filter((p) => isAllowed(role, p));
}

export function assertAllowed(member: Pick<WorkspaceMember, "role">, permission: Permission): void {
  if (!isAllowed(member.role, permission)) throw new PermissionDeniedError(permission, member.role);
}

export function isRole(value: unknown): value is WorkspaceRole {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}
