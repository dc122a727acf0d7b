import { execFile } from "node:child_process";
import net from "node:net";
import os from "node:os";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Issue 19, finding 2: the last-resort guard. Real processes, since what is tested is whether a process survives.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const CHILD = path.join(ROOT, "test/helpers/guard-child.ts");

async function child(mode: "guard" | "none") {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", CHILD, mode], { cwd: ROOT, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("process guard", () => {
  it("logs a stray exception (with its request id) and an unhandled rejection, and the process lives on", async () => {
    const r = await child("guard");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("still alive");
    const lines = r.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    const exception = lines.find((l) => l.kind === "uncaught exception");
    expect(exception).toMatchObject({ level: 50, request_id: "req-guard-test" });
    expect(exception.err.message).toBe("boom from a stray callback");
    expect(lines.find((l) => l.kind === "unhandled rejection")?.err.message).toBe("nobody awaited this");
  });

  it("control: without the guard the same stray error ends the process", async () => {
    const r = await child("none");
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toContain("still alive");
  });

  it("does not hide a start-up failure: ./builder serve on a port in use exits non-zero with the reason", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-guard-"));
    try {
      const env = {
        PATH: process.env.PATH!,
        HOME: os.tmpdir(),
        LOG_LEVEL: "silent",
        BUILDER_DATA_DIR: dataDir,
        HOST: "127.0.0.1",
        PORT: String(port),
      };
      const r = await run(path.join(ROOT, "builder"), ["serve"], { env, timeout: 120_000 }).then(
        (x) => ({ code: 0, stderr: x.stderr }),
        (e: { code?: number; stderr?: string }) => ({ code: e.code ?? -1, stderr: e.stderr ?? "" }),
      );
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/EADDRINUSE/);
    } finally {
      blocker.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
