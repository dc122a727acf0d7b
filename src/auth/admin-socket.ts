import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Logger } from "../logger.js";
import { ApiError, msg } from "../errors.js";
import type { AdminOps } from "./admin-ops.js";
import type { ApiKeyInfo, ApiKeyListed } from "./api-key.service.js";
import type { User } from "./user.service.js";

// PGlite is an embedded database: only one process may open its folder. While `builder serve` runs on PGlite,
// the `users` and `keys` commands therefore ask the server to do the work, over a Unix socket inside the data
// folder (mode 0600: whoever can use it could read the database files anyway). With DATABASE_URL set, the CLI
// talks to Postgres directly and no socket is opened.

export const ADMIN_SOCKET_NAME = "admin.sock";
const OPS = ["createUser", "setRole", "createKey", "listKeys", "revokeKey", "markForErasure"] as const;
type OpName = (typeof OPS)[number];

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, ADMIN_SOCKET_NAME);
}

/** Serves `ops` on the socket; returns a closer. Skips (with a warning) when the path is too long for a socket. */
export async function startAdminSocket(socketPath: string, ops: AdminOps, logger: Logger): Promise<() => Promise<void>> {
  if (Buffer.byteLength(socketPath) > 100) {
    logger.warn({ socketPath }, "data folder path too long for the admin socket; stop the server before using ./builder users/keys");
    return async () => {};
  }
  if (fs.existsSync(socketPath)) {
    // Another live server on this folder would be a bug (PGlite would not have opened); a leftover file is removed.
    if (await isLive(socketPath)) throw new Error(`another Builder server is already using ${path.dirname(socketPath)}`);
    fs.rmSync(socketPath, { force: true });
  }
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    // The async body answers every error itself; the listener has nothing to await.
    req.on(
      "end",
      () =>
        void (async () => {
          const op = (req.url ?? "").slice(1) as OpName;
          try {
            if (req.method !== "POST" || !OPS.includes(op))
              throw new ApiError(404, "not_found", msg("auth.no_admin_operation", { operation: req.url ?? "" }));
            const result = await (ops[op] as (input: unknown) => Promise<unknown>)(JSON.parse(raw || "{}"));
            res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: result }));
          } catch (err) {
            const e = err instanceof ApiError ? err : new ApiError(500, "internal_error", msg("auth.server_failed"));
            if (!(err instanceof ApiError)) logger.error({ err }, "admin socket operation failed");
            res
              .writeHead(e.status, { "content-type": "application/json" })
              .end(JSON.stringify({ error: { status: e.status, code: e.code, message: e.message } }));
          }
        })(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  fs.chmodSync(socketPath, 0o600);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

function isLive(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request({ socketPath, method: "POST", path: "/ping", agent: false }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on("error", () => resolve(false));
    req.end();
  });
}

function call<T>(socketPath: string, op: OpName, input: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath, method: "POST", path: `/${op}`, agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        let raw = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (raw += c));
        res.on("end", () => {
          try {
            const body = JSON.parse(raw) as { ok?: T; error?: { status: number; code: string; message: string } };
            if (body.error) reject(new ApiError(body.error.status, body.error.code, body.error.message));
            else resolve(body.ok as T);
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(input));
  });
}

function revive<K extends ApiKeyInfo>(k: K): K {
  const d = (v: unknown) => (v ? new Date(v as string) : null);
  return { ...k, createdAt: new Date(k.createdAt), lastUsedAt: d(k.lastUsedAt), revokedAt: d(k.revokedAt), expiresAt: d(k.expiresAt) };
}

/** The same operations, done by the server listening on socketPath; undefined when none is listening. */
export async function remoteOps(socketPath: string): Promise<AdminOps | undefined> {
  if (!fs.existsSync(socketPath) || !(await isLive(socketPath))) return undefined;
  return {
    remote: true,
    createUser: async (input) => {
      const u = await call<User & { createdAt: string }>(socketPath, "createUser", input);
      return { ...u, createdAt: new Date(u.createdAt) };
    },
    setRole: async (input) => {
      const u = await call<User & { createdAt: string }>(socketPath, "setRole", input);
      return { ...u, createdAt: new Date(u.createdAt) };
    },
    createKey: async (input) => {
      const r = await call<{ key: string; info: ApiKeyInfo }>(socketPath, "createKey", input);
      return { key: r.key, info: revive(r.info) };
    },
    listKeys: async (input) => (await call<ApiKeyListed[]>(socketPath, "listKeys", input)).map(revive),
    revokeKey: async (input) => revive(await call<ApiKeyInfo>(socketPath, "revokeKey", input)),
    markForErasure: (input) => call<{ id: string }>(socketPath, "markForErasure", input),
  };
}
