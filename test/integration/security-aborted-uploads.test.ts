import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Issue 19, finding 2: a client that declares a body, sends part of it and closes the connection. Before the fix
// the request's ECONNRESET had no listener and ended the process (vitest reports such an error as a failed run).
// Every route that reads a body is cut twice: at once (while the request is still being authenticated) and once
// its handler is reading. The server must keep answering /healthz and keep nothing of the cut uploads.

const DECLARED = 500_000;
const SENT = 200_000;

/** Sends a request head declaring DECLARED bytes, then `body` (part of it), waits `afterMs`, and closes. */
async function cutRequest(port: number, head: string, body: Buffer, afterMs: number): Promise<void> {
  const socket = net.createConnection(port, "127.0.0.1");
  socket.on("error", () => undefined);
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write(head + "\r\n");
  socket.write(body);
  await new Promise((r) => setTimeout(r, afterMs));
  socket.destroy();
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe("aborted request bodies never end the process nor leave anything behind", () => {
  let server: TestServer;
  let user: UserWithKey;
  let cookie = "";
  let csrf = "";

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    user = await createUserWithKey(server);
    const res = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, password: user.password }),
    });
    expect(res.status).toBe(200);
    cookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
    csrf = ((await res.json()) as { csrf_token: string }).csrf_token;
  });
  afterAll(async () => server?.teardown());

  const zipBytes = () => Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(SENT - 4, 7)]);
  const json = (size: number) => Buffer.from(`{"message":"${"a".repeat(size)}`);
  const head = (method: string, url: string, headers: Record<string, string>) =>
    `${method} ${url} HTTP/1.1\r\nHost: x\r\n${Object.entries({ ...headers, "content-length": String(DECLARED) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("")}`;

  const cases = (): Array<[string, string, string, Record<string, string>, Buffer]> => {
    const auth = bearer(user.key);
    const jsonHeaders = { ...auth, "content-type": "application/json" };
    const boundary = "----cut";
    const multipart = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="path"\r\n\r\ncut/multi.zip\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="multi.zip"\r\nContent-Type: application/zip\r\n\r\n`,
      ),
      zipBytes(),
    ]);
    return [
      ["PUT /v1/files", "PUT", `/v1/files/${user.userId}/cut/raw.zip`, { ...auth, "content-type": "application/zip" }, zipBytes()],
      [
        "POST /v1/files (multipart)",
        "POST",
        "/v1/files",
        { ...auth, "content-type": `multipart/form-data; boundary=${boundary}` },
        multipart,
      ],
      ["POST /v1/experiments", "POST", "/v1/experiments", jsonHeaders, json(SENT)],
      ["POST /v1/datasets/validate", "POST", "/v1/datasets/validate", jsonHeaders, json(SENT)],
      ["POST /v1/experiments/{id}/predict", "POST", "/v1/experiments/1/predict", jsonHeaders, json(SENT)],
      ["POST /predict", "POST", "/predict", jsonHeaders, json(SENT)],
      ["POST /v1/experiments/{id}/cancel", "POST", "/v1/experiments/1/cancel", jsonHeaders, json(SENT)],
      ["POST /v1/session", "POST", "/v1/session", { "content-type": "application/json" }, json(SENT)],
      ["POST /v1/api-keys", "POST", "/v1/api-keys", { cookie, "x-csrf-token": csrf, "content-type": "application/json" }, json(SENT)],
    ];
  };

  it.each([0, 300])("every body-reading route, cut %i ms after the partial body", async (afterMs) => {
    for (const [name, method, url, headers, body] of cases()) {
      await cutRequest(server.port, head(method, url, headers), body, afterMs);
      const health = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) });
      expect(health.status, name).toBe(200);
    }
    // Nothing of the cut uploads: no object, no .partial temp file in the bucket, no temp folder.
    await new Promise((r) => setTimeout(r, 500));
    const left = walk(server.dataDir)
      .map((f) => path.relative(server.dataDir, f))
      .filter((f) => /cut|\.partial$/.test(f) || f.startsWith(`tmp${path.sep}`));
    expect(left).toEqual([]);
    const files = (await (await fetch(`${server.url}/v1/files`, { headers: bearer(user.key) })).json()) as { files: unknown[] };
    expect(files.files).toEqual([]);
  });

  it("a complete upload after the cuts still works (the server is healthy, not just alive)", async () => {
    const body = Buffer.concat([Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)]); // an empty zip
    const res = await fetch(`${server.url}/v1/files/${user.userId}/after/ok.zip`, { method: "PUT", headers: bearer(user.key), body });
    expect(res.status).toBe(201);
  });
});
