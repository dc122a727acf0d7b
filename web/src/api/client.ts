import { locale } from "../lib/format";
import { chooseWorkspace, workspaceHeader } from "../lib/workspace";
import type { ErrorBody, UploadResult } from "./types";

/** An error from the API (or the network), with what the page shows: message, code and the request id. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly details: Array<{ field?: string; message?: string }> = [],
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
/** The session's CSRF token, sent back on unsafe methods (the cookie alone is refused). */
export function setCsrfToken(token: string | null) {
  csrfToken = token;
}

let onWorkspaceGone: () => void = () => {};
/**
 * Called when the chosen workspace is refused (404 workspace_not_found: the user was removed from it, or it was
 * deleted): the choice is forgotten first, so the next request acts in the personal workspace.
 */
export function setWorkspaceGoneHandler(fn: () => void) {
  onWorkspaceGone = fn;
}

function checkWorkspace(f: ApiFailure, sent: Record<string, string>) {
  if (f.code === "workspace_not_found" && Object.keys(sent).length) {
    chooseWorkspace(null);
    onWorkspaceGone();
  }
}

let onUnauthorized: () => void = () => {};
/** Called when a request finds the session gone (401), so the app can show the sign-in page. */
export function setUnauthorizedHandler(fn: () => void) {
  onUnauthorized = fn;
}

function failure(status: number, text: string, requestId: string | null): ApiFailure {
  try {
    const body = JSON.parse(text) as ErrorBody;
    const e = body.error;
    // A 403 may carry an object (its permission and role), not a list of bad fields: only a list is per field.
    return new ApiFailure(status, e.code, e.message, requestId, Array.isArray(e.details) ? e.details : []);
  } catch {
    return new ApiFailure(status, "http_error", `HTTP ${status}: ${text.slice(0, 200) || "no body"}`, requestId);
  }
}

/** fetch for the JSON API: same-origin cookie, CSRF header on unsafe methods, errors thrown as ApiFailure. */
/** seen: told the answer's headers (Try it reads x-input-check, the unfamiliar-input finding, from them). */
export async function api<T>(method: string, path: string, body?: unknown, seen?: (headers: Headers) => void): Promise<T> {
  // The API writes its error messages in the dashboard's language (codes and field names stay as they are).
  const ws = workspaceHeader();
  const headers: Record<string, string> = { accept: "application/json", "accept-language": locale(), ...ws };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrfToken) headers["x-csrf-token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  } catch (err) {
    throw new ApiFailure(0, "network_error", `the server could not be reached (${(err as Error).message})`, null);
  }
  const text = await res.text();
  if (!res.ok) {
    const f = failure(res.status, text, res.headers.get("x-request-id"));
    if (res.status === 401 && path !== "/v1/session") onUnauthorized();
    // The workspaces routes name a workspace in their path: a 404 there is about that one, not the chosen one.
    if (!path.startsWith("/v1/workspaces/")) checkWorkspace(f, ws);
    throw f;
  }
  seen?.(res.headers);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A file as the raw body of a POST (batch scoring): the same cookie, CSRF header and errors as api(). */
export async function postFile<T>(path: string, file: File, contentType: string): Promise<T> {
  const headers: Record<string, string> = {
    accept: "application/json",
    "accept-language": locale(),
    "content-type": contentType,
    ...workspaceHeader(),
  };
  if (csrfToken) headers["x-csrf-token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method: "POST", headers, body: file, credentials: "same-origin" });
  } catch (err) {
    throw new ApiFailure(0, "network_error", `the server could not be reached (${(err as Error).message})`, null);
  }
  const text = await res.text();
  if (!res.ok) throw failure(res.status, text, res.headers.get("x-request-id"));
  return JSON.parse(text) as T;
}

export interface UploadProgress {
  loaded: number;
  total: number;
  /** Bytes per second over the last few seconds. */
  speed: number;
}

/**
 * Uploads a zip as multipart/form-data with XMLHttpRequest, because fetch reports no upload progress.
 * Resolves with the stored object; rejects with ApiFailure. `abort` cancels it.
 */
export function uploadZip(
  file: File,
  objectPath: string,
  onProgress: (p: UploadProgress) => void,
): { done: Promise<UploadResult>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const samples: Array<{ t: number; loaded: number }> = [];
  const done = new Promise<UploadResult>((resolve, reject) => {
    xhr.open("POST", "/v1/files");
    if (csrfToken) xhr.setRequestHeader("x-csrf-token", csrfToken);
    xhr.setRequestHeader("accept-language", locale());
    for (const [name, value] of Object.entries(workspaceHeader())) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => {
      const now = performance.now();
      samples.push({ t: now, loaded: e.loaded });
      while (samples.length > 2 && now - samples[0].t > 3000) samples.shift();
      const first = samples[0];
      const speed = now > first.t ? ((e.loaded - first.loaded) * 1000) / (now - first.t) : 0;
      onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size, speed });
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(JSON.parse(xhr.responseText) as UploadResult);
      else reject(failure(xhr.status, xhr.responseText, xhr.getResponseHeader("x-request-id")));
    };
    xhr.onerror = () => reject(new ApiFailure(0, "network_error", "the upload was interrupted (network error); retry", null));
    xhr.onabort = () => reject(new ApiFailure(0, "aborted", "the upload was cancelled", null));
    const form = new FormData();
    form.append("path", objectPath);
    form.append("file", file, file.name);
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}

/** One server-sent event of a streamed POST reply. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/**
 * POSTs JSON and reads a text/event-stream reply (EventSource can only GET): each event is handed to onEvent as
 * it arrives. Errors before the stream starts (a JSON error body) are thrown as ApiFailure, like api().
 */
export async function postEventStream(path: string, body: unknown, onEvent: (e: StreamEvent) => void, signal?: AbortSignal) {
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "accept-language": locale(),
    "content-type": "application/json",
    ...workspaceHeader(),
  };
  if (csrfToken) headers["x-csrf-token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), credentials: "same-origin", signal });
  } catch (err) {
    if (signal?.aborted) throw new ApiFailure(0, "aborted", "the request was cancelled", null);
    throw new ApiFailure(0, "network_error", `the server could not be reached (${(err as Error).message})`, null);
  }
  if (!res.ok || !res.body) {
    const f = failure(res.status, await res.text(), res.headers.get("x-request-id"));
    if (res.status === 401) onUnauthorized();
    throw f;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? "message";
      const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join("\n");
      if (data) onEvent({ event, data: JSON.parse(data) as unknown });
    }
  }
}
