// The one table of the permissions walk (permissions-walk.test.ts): every operation of the OpenAPI document, what it
// needs of a role in the workspace and of an API key, with the real rows and harmless bodies to call it with.
import { randomBytes, randomUUID } from "node:crypto";
import { isAllowed, type Permission, type WorkspaceRole } from "../../src/workspaces/permissions.js";
import type { KeyScope } from "../../src/auth/key-scopes.js";
import type { TestServer } from "../helpers/server.js";
import { dataRequest } from "./experiments-fixtures.js";

/** What an operation needs of a session's caller. */
export type Need =
  | Permission // a workspace permission (src/workspaces/permissions.ts): refused with 403 missing_permission_<perm>
  | "member" // any member of the workspace (every role)
  | "own" // the caller's own things (account, session, own keys, own PACS connection): no workspace role involved
  | "server_admin" // the server's administrators (users.role), whatever the workspace role: 403 admin_only
  | "public"; // no authentication at all

/** How a key reaches an operation: the scope it needs (x-builder-scope), or not at all (session-only, public). */
export type Via = KeyScope | "session" | "public";

export interface Ctx {
  server: TestServer;
  shared: string;
  modelExp: number;
  batchId: string;
  alertId: string;
  adminTarget: string;
  /** A fresh experiment of the workspace, for calls that delete or cancel one. */
  throwawayExperiment(): Promise<number>;
  /** A fresh viewer of the workspace, for calls that change or remove a member. */
  throwawayMember(): Promise<string>;
  /** A fresh shared workspace with the walking actors in their roles, for deleting one. */
  throwawayWorkspace(): Promise<string>;
  /** A conversation of the caller's own in the workspace (conversations are their asker's). */
  ownConversation(h: Record<string, string>): Promise<string>;
}

export interface Entry {
  need: Need;
  via: Via;
  params?: (ctx: Ctx, h: Record<string, string>) => Promise<Record<string, string | number>> | Record<string, string | number>;
  body?: (ctx: Ctx, actor: Actor) => unknown;
  /** A raw body (uploads), sent with this content type. */
  raw?: { contentType: string; body: string };
  /** The call acts on the caller itself (sign out, erase, leave): made by a fresh user with the same role. */
  throwawayActor?: boolean;
  /** Not walked, with the reason (listed, never silent). */
  exclude?: string;
  /** The same operation with another body that needs another permission (walked as well). */
  also?: Array<Pick<Entry, "need" | "body">>;
}

/** An entry and its variants, each called in every walk. */
export const variants = (entry: Entry): Entry[] => [entry, ...(entry.also ?? []).map((v) => ({ ...entry, ...v, also: undefined }))];

/**
 * Permissions of the table (src/workspaces/permissions.ts) that no route asks for yet, each with why (docs/teams.md
 * "Not yet"). The first test fails when a route starts asking for one, so that this list only shrinks.
 */
export const NOT_ROUTED_YET: Partial<Record<Permission, string>> = {
  "review.write": "review notes have no route yet (the intended use is intended_use.write, PATCH /v1/experiments/{id})",
};

export interface Actor {
  userId: string;
  email: string;
  password: string;
  headers: Record<string, string>;
}

const BOUNDARY = "walk-boundary";
/** A multipart form as the dashboard sends it: the path, then the file. */
const multipart = (where: string) =>
  [
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="path"\r\n\r\n${where}\r\n`,
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="data.zip"\r\ncontent-type: application/zip\r\n\r\nnot a zip\r\n`,
    `--${BOUNDARY}--\r\n`,
  ].join("");
const exp = (c: Ctx) => ({ experiment_id: c.modelExp });
const zipOf = (c: Ctx) => `${c.shared}/study/data.zip`;

// ONE table: every operation of the OpenAPI document, what it needs of a role and of a key.
export const TABLE: Record<string, Entry> = {
  "GET /healthz": { need: "public", via: "public" },
  "GET /readyz": { need: "public", via: "public" },
  "POST /v1/session": { need: "public", via: "public", body: () => ({ email: "nobody@test.example", password: "wrong-password" }) },
  "GET /v1/setup": { need: "public", via: "public" },
  "POST /v1/setup": { need: "public", via: "public", body: () => ({}) },
  "POST /v1/users": { need: "public", via: "public", body: () => ({}) },
  "POST /v1/invitations/check": { need: "public", via: "public", body: () => ({ token: "x" }) },
  "POST /v1/invitations/accept": { need: "public", via: "public", body: () => ({ token: "x" }) },
  "POST /v1/password-resets/check": { need: "public", via: "public", body: () => ({ token: "x" }) },
  "POST /v1/password-resets/use": { need: "public", via: "public", body: () => ({ token: "x" }) },

  "GET /v1/me": { need: "own", via: "read" },
  "DELETE /v1/me": { need: "own", via: "admin", throwawayActor: true, body: (_c, a) => ({ password: a.password }) },
  "GET /v1/session": { need: "own", via: "session" },
  "DELETE /v1/session": { need: "own", via: "session", throwawayActor: true },
  "PUT /v1/account/password": {
    need: "own",
    via: "session",
    throwawayActor: true,
    body: (_c, a) => ({ current_password: a.password, new_password: `pw-${randomBytes(12).toString("hex")}` }),
  },

  "GET /v1/admin/users": { need: "server_admin", via: "admin" },
  "POST /v1/admin/users/{id}/disable": { need: "server_admin", via: "admin", params: (c) => ({ id: c.adminTarget }) },
  "POST /v1/admin/users/{id}/enable": { need: "server_admin", via: "admin", params: (c) => ({ id: c.adminTarget }) },
  "PUT /v1/admin/users/{id}/role": {
    need: "server_admin",
    via: "admin",
    params: (c) => ({ id: c.adminTarget }),
    body: () => ({ role: "member" }),
  },
  "POST /v1/admin/users/{id}/password-reset": { need: "server_admin", via: "admin", params: (c) => ({ id: c.adminTarget }) },
  "GET /v1/admin/invitations": { need: "server_admin", via: "admin" },
  "POST /v1/admin/invitations": {
    need: "server_admin",
    via: "admin",
    body: () => ({ email: `inv-${randomBytes(4).toString("hex")}@test.example` }),
  },
  "DELETE /v1/admin/invitations/{id}": { need: "server_admin", via: "admin", params: () => ({ id: randomUUID() }) },
  "GET /v1/admin/workers": { need: "server_admin", via: "admin" },
  "POST /v1/admin/workers/{id}/drain": { need: "server_admin", via: "admin", params: () => ({ id: "no-such-worker" }) },
  "POST /v1/admin/workers/{id}/resume": { need: "server_admin", via: "admin", params: () => ({ id: "no-such-worker" }) },

  // A key is made in the workspace the dashboard shows, by an owner there (key.manage); each member lists and
  // revokes their own keys (docs/teams.md "Not yet": an owner does not yet manage others').
  "POST /v1/api-keys": { need: "key.manage", via: "session", body: () => ({ name: "walk" }) },
  "GET /v1/api-keys": { need: "own", via: "session" },
  "DELETE /v1/api-keys/{id}": { need: "own", via: "session", params: () => ({ id: randomUUID() }) },

  "GET /v1/workspaces": { need: "own", via: "session" },
  "POST /v1/workspaces": { need: "own", via: "session", body: () => ({ name: "Walk" }) },
  "PATCH /v1/workspaces/{id}": {
    need: "workspace.rename",
    via: "session",
    params: (c) => ({ id: c.shared }),
    body: () => ({ name: "Cardiology" }),
  },
  "GET /v1/workspaces/{id}/members": { need: "member", via: "session", params: (c) => ({ id: c.shared }) },
  "POST /v1/workspaces/{id}/members": {
    need: "members.manage",
    via: "session",
    params: (c) => ({ id: c.shared }),
    body: () => ({ email: `m-${randomBytes(4).toString("hex")}@test.example`, role: "viewer" }),
  },
  "PATCH /v1/workspaces/{id}/members/{user_id}": {
    need: "members.manage",
    via: "session",
    params: async (c) => ({ id: c.shared, user_id: await c.throwawayMember() }),
    body: () => ({ role: "reviewer" }),
  },
  "DELETE /v1/workspaces/{id}/members/{user_id}": {
    need: "members.manage",
    via: "session",
    params: async (c) => ({ id: c.shared, user_id: await c.throwawayMember() }),
  },
  "DELETE /v1/workspaces/{id}": {
    need: "workspace.delete",
    via: "session",
    params: async (c) => ({ id: await c.throwawayWorkspace() }),
  },
  "POST /v1/workspaces/{id}/leave": { need: "member", via: "session", throwawayActor: true, params: (c) => ({ id: c.shared }) },
  "PATCH /v1/workspaces/{workspace_id}/settings": {
    need: "workspace.settings",
    via: "admin",
    params: (c) => ({ workspace_id: c.shared }),
    body: () => ({ require_approval: false }),
  },

  "POST /v1/experiments": {
    need: "experiment.build",
    via: "build",
    body: (c, a) => dataRequest(a.userId, 900 + Math.floor(Math.random() * 90000), `${c.shared}/missing/data.zip`, ["f1"]),
  },
  "GET /v1/experiments": { need: "experiment.read", via: "read" },
  "GET /v1/experiments/{experiment_id}": { need: "experiment.read", via: "read", params: exp },
  "PATCH /v1/experiments/{experiment_id}": {
    need: "experiment.build",
    via: "build",
    params: exp,
    body: () => ({ name: "Shared cohort" }),
    also: [{ need: "intended_use.write", body: () => ({ intended_use: "Triage of adult outpatients" }) }],
  },
  "DELETE /v1/experiments/{experiment_id}": {
    need: "experiment.delete",
    via: "build",
    params: async (c) => ({ experiment_id: await c.throwawayExperiment() }),
  },
  "POST /v1/experiments/{experiment_id}/cancel": {
    need: "experiment.build",
    via: "build",
    params: async (c) => ({ experiment_id: await c.throwawayExperiment() }),
  },
  "GET /v1/experiments/{experiment_id}/logs": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/experiments/{experiment_id}/events": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/experiments/{experiment_id}/report": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/experiments/{experiment_id}/model-card": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/experiments/{experiment_id}/report.html": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/experiments/{experiment_id}/figures/{name}": {
    need: "experiment.read",
    via: "read",
    params: (c) => ({ ...exp(c), name: "roc.png" }),
  },
  "GET /v1/experiments/{experiment_id}/approval": { need: "experiment.read", via: "read", params: exp },
  "POST /v1/experiments/{experiment_id}/approval": {
    need: "model.approve",
    via: "admin",
    params: exp,
    body: () => ({ intended_use: "Triage of adult outpatients" }),
  },

  "PUT /v1/files/{user_dir}/{experiment_dir}/{file}": {
    need: "dataset.upload",
    via: "build",
    params: (c) => ({ user_dir: c.shared, experiment_dir: "walk", file: "data.zip" }),
    raw: { contentType: "application/zip", body: "not a zip" },
  },
  "DELETE /v1/files/{user_dir}/{experiment_dir}/{file}": {
    need: "dataset.delete",
    via: "build",
    params: (c) => ({ user_dir: c.shared, experiment_dir: "study", file: "nothing.zip" }),
  },
  "DELETE /v1/files/{user_dir}/{experiment_dir}": {
    need: "dataset.delete",
    via: "build",
    params: (c) => ({ user_dir: c.shared, experiment_dir: "nothing-here" }),
  },
  "POST /v1/files": {
    need: "dataset.upload",
    via: "build",
    raw: { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart("walk/form.zip") },
  },
  "GET /v1/files": { need: "experiment.read", via: "read" },
  // Checking a dataset writes nothing: a read for roles (datasets/service.ts), but it costs a worker's time, so build for keys.
  "POST /v1/datasets/validate": {
    need: "experiment.read",
    via: "build",
    body: (c) => ({ zip_gcloud: zipOf(c), task: "data", label_cols: ["diagnosis"], data_cols: ["f1"], model_type: 0 }),
  },
  "GET /v1/datasets/columns": { need: "experiment.read", via: "read" },
  "GET /v1/datasets/samples": { need: "experiment.read", via: "read" },
  "POST /v1/datasets/samples/{sample_id}": { need: "dataset.upload", via: "build", params: () => ({ sample_id: "no-such-sample" }) },
  "POST /v1/datasets/from-pacs": {
    need: "dataset.upload",
    via: "build",
    body: (c) => ({ csv: "uid,label\n1.2.3,1\n", label_cols: ["label"], model_type: 0, zip_gcloud: `${c.shared}/pacs/data.zip` }),
  },

  // Predicting is reading a model: every member may try the workspace's models from the dashboard.
  "POST /v1/experiments/{experiment_id}/predict": {
    need: "member",
    via: "predict",
    params: exp,
    body: () => ({ message: [63, 1, 27.5, 2] }),
  },
  "POST /predict": { need: "member", via: "predict", body: (c) => ({ message: [63, 1, 27.5, 2], experiment_id: c.modelExp }) },

  "GET /v1/models": { need: "experiment.read", via: "read" },
  "GET /v1/models/{experiment_id}": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/models/{experiment_id}/operating-point": { need: "experiment.read", via: "read", params: exp },
  "POST /v1/models/{experiment_id}/operating-point": {
    need: "operating_point.set",
    via: "build",
    params: exp,
    body: () => ({ rule: "threshold", threshold: 0.5 }),
  },
  "GET /v1/models/{experiment_id}/versions": { need: "experiment.read", via: "read", params: exp },
  "POST /v1/models/{experiment_id}/versions/{version}/current": {
    need: "operating_point.set",
    via: "build",
    params: (c) => ({ ...exp(c), version: 1 }),
  },
  "GET /v1/models/{experiment_id}/download": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/models/{experiment_id}/input-check": { need: "experiment.read", via: "read", params: exp },
  "PUT /v1/models/{experiment_id}/input-check": { need: "operating_point.set", via: "build", params: exp, body: () => ({ mode: "flag" }) },
  "GET /v1/models/{experiment_id}/monitoring": { need: "experiment.read", via: "read", params: exp },
  "POST /v1/models/{experiment_id}/outcomes": {
    need: "batch.run",
    via: "build",
    params: exp,
    body: () => [{ request_id: "no-such-request", label: 1 }],
  },
  "GET /v1/models/{experiment_id}/alerts": { need: "experiment.read", via: "read", params: exp },
  "POST /v1/models/{experiment_id}/alerts/{alert_id}/acknowledge": {
    need: "experiment.build",
    via: "build",
    params: (c) => ({ ...exp(c), alert_id: c.alertId }),
    body: () => ({}),
  },
  "POST /v1/models/{experiment_id}/alerts/{alert_id}/resolve": {
    need: "experiment.build",
    via: "build",
    params: (c) => ({ ...exp(c), alert_id: c.alertId }),
    body: () => ({ comment: "checked" }),
  },
  "GET /v1/models/{experiment_id}/alert-rules": { need: "experiment.read", via: "read", params: exp },
  "PUT /v1/models/{experiment_id}/alert-rules": { need: "experiment.build", via: "build", params: exp, body: () => ({}) },
  "POST /v1/models/{experiment_id}/batch": {
    need: "batch.run",
    via: "build",
    params: exp,
    raw: { contentType: "text/csv", body: "patient_id,bmi,site,age,sex\nP1,27.5,north,63,F\n" },
  },
  "GET /v1/models/{experiment_id}/batches": { need: "experiment.read", via: "read", params: exp },
  "GET /v1/batches/{batch_id}": { need: "experiment.read", via: "read", params: (c) => ({ batch_id: c.batchId }) },
  "GET /v1/batches/{batch_id}/events": { need: "experiment.read", via: "read", params: (c) => ({ batch_id: c.batchId }) },
  "GET /v1/batches/{batch_id}/overlays.zip": { need: "experiment.read", via: "read", params: (c) => ({ batch_id: c.batchId }) },
  "GET /v1/batches/{batch_id}/results.csv": { need: "experiment.read", via: "read", params: (c) => ({ batch_id: c.batchId }) },

  "POST /v1/chat": { need: "experiment.read", via: "read", body: () => ({ message: "How many experiments are there?" }) },
  "GET /v1/chat/conversations": { need: "experiment.read", via: "read" },
  "GET /v1/chat/conversations/{conversation_id}": {
    need: "experiment.read",
    via: "read",
    params: async (c, h) => ({ conversation_id: await c.ownConversation(h) }),
  },
  "DELETE /v1/chat/conversations/{conversation_id}": {
    need: "own",
    via: "build",
    params: async (c, h) => ({ conversation_id: await c.ownConversation(h) }),
  },

  "GET /v1/audit": { need: "experiment.read", via: "read" },
  "GET /v1/audit.csv": { need: "experiment.read", via: "read" },

  // A PACS connection and its auto-scoring rules stay the user's own (docs/teams.md "Not yet").
  "GET /v1/pacs": { need: "own", via: "read" },
  "PUT /v1/pacs": { need: "own", via: "admin", body: () => ({}) },
  "DELETE /v1/pacs": { need: "own", via: "admin" },
  "POST /v1/pacs/test": { need: "own", via: "admin" },
  "PUT /v1/models/{experiment_id}/pacs": { need: "experiment.build", via: "build", params: exp, body: () => ({ send_back: false }) },
  "GET /v1/models/{experiment_id}/pacs": { need: "experiment.read", via: "read", params: exp },
  "PUT /v1/models/{experiment_id}/pacs/auto-score": { need: "own", via: "build", params: exp, body: () => ({ enabled: false }) },
  "GET /v1/models/{experiment_id}/pacs/auto-score": { need: "own", via: "read", params: exp },
};

/**
 * What a member with `role` gets: null when allowed, else the refusal's code. Here the owner is also the server's
 * administrator and the other roles are ordinary members of the server.
 */
export function roleExpectation(role: WorkspaceRole, need: Need): string | null {
  if (need === "server_admin") return role === "owner" ? null : "admin_only";
  if (need === "member" || need === "own" || need === "public") return null;
  return isAllowed(role, need) ? null : `missing_permission_${need.replace(".", "_")}`;
}

/**
 * Allowed: anything but a refusal (401, 403) or a crash (5xx); a 400, 404 or 409 is the minimal body's or the row's
 * state, not a permission. Refused: that code exactly, with its status (401 for session_required, else 403).
 */
export function answeredAs(got: { status: number; code?: string }, expected: string | null): boolean {
  if (expected === null) return got.status !== 401 && got.status !== 403 && got.status < 500;
  return got.status === (expected === "session_required" ? 401 : 403) && got.code === expected;
}
