import { ApiError, msg, detail, type Message } from "../errors.js";
import type { OutboundGuard } from "../net/outbound-guard.js";
import { OutboundRefusal } from "../net/outbound-guard.js";
import type { PacsConnectionRow, PacsRepository } from "./repository.js";
import type { SecretBox } from "./secret-box.js";
import type { Scope } from "../workspaces/scope.js";
import { assertAllowed } from "../workspaces/permissions.js";

/** What the API shows of a connection: never the password, only whether one is kept. */
export interface PacsConnectionView {
  dicomweb_url: string;
  username: string | null;
  has_password: boolean;
  caption: string | null;
  secondary_capture: boolean;
  updated_at: string;
}

export interface PacsConnectionInput {
  dicomweb_url: string;
  username?: string | null;
  /** undefined: keep the one kept; null or "": remove it. */
  password?: string | null;
  caption?: string | null;
  secondary_capture?: boolean;
}

/** The connection as the senders use it: the root and the Authorization header, if any. */
export interface PacsTarget {
  root: string;
  authorization?: string;
  caption: string | null;
  secondaryCapture: boolean;
}

export const DEFAULT_CAPTION = "NOT FOR DIAGNOSIS - research use only";

/** The DICOMweb root as stored: http(s), no credentials, query or fragment, no trailing slash. */
export function dicomWebRoot(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw invalid("dicomweb_url", msg("pacs.url_not_url"));
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid("dicomweb_url", msg("pacs.url_not_http"));
  if (url.username || url.password) throw invalid("dicomweb_url", msg("pacs.url_credentials"));
  if (url.search || url.hash) throw invalid("dicomweb_url", msg("pacs.url_query"));
  return trimTrailingSlashes(url.toString());
}

/** `s` without its trailing slashes; a loop, not /\/+$/, whose backtracking is quadratic on a user's long run of slashes. */
function trimTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 47) end--;
  return s.slice(0, end);
}

function invalid(field: string, problem: Message) {
  return new ApiError(400, "invalid_request", msg("request.field_problem", { field, problem }), [detail(field, problem)]);
}

/** Whether `url` lies under the root (same origin, path below the root's): only there are credentials sent. */
export function underRoot(root: string, raw: string): boolean {
  let url: URL;
  let base: URL;
  try {
    url = new URL(raw);
    base = new URL(root);
  } catch {
    return false;
  }
  if (url.origin !== base.origin || url.username || url.password) return false;
  const prefix = trimTrailingSlashes(base.pathname);
  return url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);
}

export class PacsConnections {
  /** guard: serving's outbound guard (a function: serving is made after the connections, and asks them for credentials). */
  constructor(private readonly deps: { repo: PacsRepository; box: SecretBox; guard: () => OutboundGuard }) {}

  private view(row: PacsConnectionRow): PacsConnectionView {
    return {
      dicomweb_url: row.dicomWebUrl,
      username: row.username,
      has_password: row.passwordSealed !== null,
      caption: row.caption,
      secondary_capture: row.secondaryCapture,
      updated_at: row.updatedAt.toISOString(),
    };
  }

  async get(userId: string): Promise<PacsConnectionView | null> {
    const row = await this.deps.repo.get(userId);
    return row && this.view(row);
  }

  async save(userId: string, input: PacsConnectionInput): Promise<PacsConnectionView> {
    const before = await this.deps.repo.get(userId);
    const root = dicomWebRoot(input.dicomweb_url);
    const username = input.username?.trim() || null;
    // The kept password follows the connection to a new address only on the same origin: a password typed for one
    // server is never sent to another by editing the address alone.
    let sealed = before?.passwordSealed ?? null;
    if (input.password === null || input.password === "") sealed = null;
    else if (input.password !== undefined) sealed = this.deps.box.seal(input.password);
    else if (sealed && before && new URL(before.dicomWebUrl).origin !== new URL(root).origin)
      throw invalid("password", msg("pacs.address_changed"));
    if (sealed && !username) throw invalid("username", msg("pacs.password_needs_user"));
    const row = await this.deps.repo.upsert({
      userId,
      dicomWebUrl: root,
      username,
      passwordSealed: sealed,
      caption: input.caption === undefined ? (before?.caption ?? null) : input.caption?.trim() || null,
      secondaryCapture: input.secondary_capture ?? before?.secondaryCapture ?? true,
    });
    return this.view(row);
  }

  remove(userId: string): Promise<boolean> {
    return this.deps.repo.remove(userId);
  }

  sendBack(workspaceId: string, experimentId: number): Promise<boolean | null> {
    return this.deps.repo.sendBack(workspaceId, experimentId);
  }

  /** The model's send-back setting is the builders' (the same permission as building it). */
  setSendBack(scope: Scope, experimentId: number, on: boolean): Promise<boolean> {
    assertAllowed(scope.workspace, "experiment.build");
    return this.deps.repo.setSendBack(scope.workspace.id, experimentId, on);
  }

  /** The connection for sending, or null when the user has none. */
  async target(userId: string): Promise<PacsTarget | null> {
    const row = await this.deps.repo.get(userId);
    if (!row) return null;
    let authorization: string | undefined;
    if (row.username) {
      const password = row.passwordSealed === null ? "" : this.deps.box.open(row.passwordSealed);
      if (password === null) throw new ApiError(409, "pacs_password_unreadable", msg("pacs.password_unreadable"));
      authorization = `Basic ${Buffer.from(`${row.username}:${password}`, "utf8").toString("base64")}`;
    }
    return { root: row.dicomWebUrl, authorization, caption: row.caption, secondaryCapture: row.secondaryCapture };
  }

  /** The Authorization header for a link under the user's PACS root, or undefined (another server gets nothing). */
  async authorizationFor(userId: string, url: string): Promise<string | undefined> {
    const row = await this.deps.repo.get(userId);
    if (!row || !underRoot(row.dicomWebUrl, url)) return undefined;
    return (await this.target(userId))?.authorization;
  }

  /**
   * Test connection: one QIDO-RS search (GET {root}/studies?limit=1), which every DICOMweb server answers, with the
   * credentials. The answer says what went wrong in words a user can act on.
   */
  async test(userId: string): Promise<{ ok: boolean; status: number | null; message: string }> {
    const target = await this.target(userId);
    if (!target) throw new ApiError(404, "not_found", msg("pacs.not_configured_short"));
    try {
      const res = await this.deps.guard().fetch(`${target.root}/studies?limit=1`, {
        headers: { accept: "application/dicom+json", ...(target.authorization ? { authorization: target.authorization } : {}) },
        maxRedirects: 0,
        maxBytes: 1024 * 1024,
      });
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, message: "the PACS answered a DICOMweb search" };
      const why =
        res.status === 401 || res.status === 403
          ? "the PACS refused the credentials"
          : res.status === 404
            ? "no DICOMweb service at this address (check the path, e.g. /dicom-web)"
            : `the PACS answered HTTP ${res.status}`;
      return { ok: false, status: res.status, message: why };
    } catch (err) {
      if (err instanceof OutboundRefusal) return { ok: false, status: null, message: err.message };
      throw err;
    }
  }
}
