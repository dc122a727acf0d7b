import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The first account of a fresh install, made over HTTP with the setup code `./builder serve` prints (issue 38
// item 4: "the first run needs a terminal"). A real `./builder serve` child on a fresh PGlite folder: the code is
// read from its terminal output, as an operator would, and only that code opens the server.

const ROOT = path.resolve(__dirname, "../..");
const EMAIL = "admin@hospital.example";
const PASSWORD = "a long enough first password";

describe("first run: the setup code", () => {
  let child: ChildProcess;
  let url: string;
  let dataDir: string;
  let printed = "";

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-first-run-"));
    child = spawn(path.join(ROOT, "builder"), ["serve", "--port", "0"], {
      cwd: ROOT,
      env: { ...process.env, BUILDER_DATA_DIR: dataDir, NODE_ENV: "test", LOG_LEVEL: "info", DATABASE_URL: "", REDIS_URL: "", PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (printed += d));
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline && !/setup code/.test(printed)) await new Promise((r) => setTimeout(r, 200));
    const port = /"url":"http:\/\/localhost:(\d+)"/.exec(out)?.[1];
    expect(port, `serve printed no URL:\n${out}\n${printed}`).toBeTruthy();
    url = `http://127.0.0.1:${port}`;
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const json = async (r: Response): Promise<any> => r.json();
  const setup = (body: unknown) =>
    fetch(`${url}/v1/setup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("serve prints a 16-character code in the terminal, and the page's state says no user exists", async () => {
    expect(printed).toMatch(/with no administrator/);
    expect(printed).toMatch(/It works until \d{4}-\d\d-\d\dT/);
    expect(printed).toMatch(/\n {4}[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}\n/);
    expect(await json(await fetch(`${url}/v1/setup`))).toMatchObject({ users_exist: false, admin_exists: false });
  });

  it("a wrong code is a 403 naming setup_code, and creates nothing; a weak password is a 400 even with the right code", async () => {
    const wrong = await setup({ setup_code: "AAAA-BBBB-CCCC-DDDD", email: EMAIL, password: PASSWORD });
    expect(wrong.status).toBe(403);
    const body = await json(wrong);
    expect(body.error.code).toBe("invalid_setup_code");
    expect(body.error.message).toContain("printed in its log");
    expect(body.error.details.map((d: { field: string }) => d.field)).toEqual(["setup_code"]);
    expect((await json(await fetch(`${url}/v1/setup`))).users_exist).toBe(false);

    const weak = await setup({ setup_code: code(), email: EMAIL, password: "short" });
    expect(weak.status).toBe(400);
    expect((await json(await fetch(`${url}/v1/setup`))).users_exist).toBe(false);
  });

  it("the printed code, typed in lower case without dashes, makes the account once; two racing requests make one", async () => {
    const typed = code().toLowerCase().replace(/-/g, "");
    const [a, b] = await Promise.all([
      setup({ setup_code: typed, email: EMAIL, password: PASSWORD }),
      setup({ setup_code: typed, email: "second@hospital.example", password: PASSWORD }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const refused = [a, b].find((r) => r.status === 409)!;
    expect((await json(refused)).error.code).toBe("setup_done");
    const made = (await json([a, b].find((r) => r.status === 201)!)) as { email: string };
    const signIn = await fetch(`${url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: made.email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    expect((await json(signIn)).role).toBe("admin"); // the first account administers the others
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const audit = await json(await fetch(`${url}/v1/audit`, { headers: { cookie } }));
    expect(audit.data.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(["first_account_created", "sign_in"]));
    expect((await json(await fetch(`${url}/v1/setup`))).users_exist).toBe(true);

    const again = await setup({ setup_code: typed, email: "third@hospital.example", password: PASSWORD });
    expect(again.status).toBe(409);
  });

  // Issue 48 finding 11: once the last account was erased, the code printed at start-up opened the server again.
  it("after the administrator erases their account, the old code is refused and a new one, printed in the terminal, works", async () => {
    const first = codes();
    expect(first).toHaveLength(1);
    const signIn = await fetch(`${url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    const email = signIn.status === 200 ? EMAIL : "second@hospital.example";
    const session =
      signIn.status === 200
        ? signIn
        : await fetch(`${url}/v1/session`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email, password: PASSWORD }),
          });
    const { csrf_token } = await json(session);
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    const erase = await fetch(`${url}/v1/me`, {
      method: "DELETE",
      headers: { "content-type": "application/json", cookie, "x-csrf-token": csrf_token },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(erase.status).toBe(202);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && codes().length < 2) await new Promise((r) => setTimeout(r, 200));
    const fresh = codes();
    expect(fresh, printed).toHaveLength(2);
    expect(fresh[1]).not.toBe(fresh[0]);
    expect(await json(await fetch(`${url}/v1/setup`))).toMatchObject({ users_exist: false, admin_exists: false });

    const old = await setup({ setup_code: fresh[0], email: "new-admin@hospital.example", password: PASSWORD });
    expect(old.status).toBe(403);
    expect((await json(old)).error.code).toBe("invalid_setup_code");
    const made = await setup({ setup_code: fresh[1], email: "new-admin@hospital.example", password: PASSWORD });
    expect(made.status).toBe(201);
    // Spent: it does not make a second administrator.
    expect((await setup({ setup_code: fresh[1], email: "third@hospital.example", password: PASSWORD })).status).toBe(409);
    expect(codes()).toHaveLength(2);
  }, 90_000);

  function codes(): string[] {
    return [...printed.matchAll(/\n {4}([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})\n/g)].map((m) => m[1]!);
  }

  function code(): string {
    return codes()[0]!;
  }
});
