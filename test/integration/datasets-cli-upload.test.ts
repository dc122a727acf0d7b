import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// ./builder upload, run as a user runs it, against a real server (in the storage suite: on the local folder and S3).

const run = promisify(execFile);

describe("./builder upload", () => {
  let server: TestServer;
  let user: UserWithKey;
  let file: string;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget(), { MAX_UPLOAD_BYTES: String(3_000_000) });
    user = await createUserWithKey(server);
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cli-")), "scans.zip");
    fs.writeFileSync(file, Buffer.concat([Buffer.from("PK\x03\x04", "latin1"), Buffer.alloc(2_000_000 - 4, 9)])); // a zip signature: the server checks it
  });
  afterAll(async () => server?.teardown());

  it("streams the file, draws progress on stderr and prints the stored object", async () => {
    const { stdout, stderr } = await run("./builder", ["upload", file, "--to", "exp7", "--key", user.key, "--url", server.url], {
      env: { ...process.env, LOG_LEVEL: "silent" },
    });
    const out = JSON.parse(stdout.trim().split("\n").pop()!);
    expect(out).toEqual({
      zip_gcloud: `${user.userId}/exp7/scans.zip`,
      size: 2_000_000,
      sha256: createHash("sha256").update(fs.readFileSync(file)).digest("hex"),
    });
    expect(stderr).toContain("100%");
    expect(stderr).toMatch(/\[#+\]/);
    expect(await server.services.bucket.stat(`${user.userId}/exp7/scans.zip`)).toEqual({ size: 2_000_000 });
  });

  it("says why when the server refuses (bad key, over the limit)", async () => {
    const bad = await run("./builder", ["upload", file, "--to", "exp7", "--key", "nope", "--url", server.url]).catch((e) => e);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("invalid_api_key");
    const big = path.join(path.dirname(file), "big.zip");
    fs.writeFileSync(big, Buffer.alloc(3_500_000, 1));
    const over = await run("./builder", ["upload", big, "--to", "exp7", "--key", user.key, "--url", server.url]).catch((e) => e);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain("payload_too_large");
  });
});
