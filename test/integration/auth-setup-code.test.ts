import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FirstRunSetup } from "../../src/auth/first-run.js";
import { parseConfig } from "../../src/config.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// The setup code's life (issue 48 finding 11), on a real server and database: it expires, it is spent the moment an
// administrator exists however that came about, and only when no administrator is left is a new one made and
// printed, never the old one. (test/integration/auth-first-run.test.ts drives `./builder serve` itself.)

const PASSWORD = "a long enough first password";
const json = async (r: Response): Promise<any> => r.json();

describe("the setup code", () => {
  let server: TestServer;
  const printed: string[] = [];
  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    server.services.auth.firstRun.onNewCode((code) => printed.push(code));
    await server.services.auth.firstRun.ensureCode();
  });
  afterAll(async () => {
    await server?.teardown();
  });
  const setup = (body: unknown) =>
    fetch(`${server.url}/v1/setup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("works for SETUP_CODE_TTL_HOURS (24 by default), then is refused as expired", async () => {
    expect(parseConfig({}).SETUP_CODE_TTL_HOURS).toBe(24);
    expect(() => parseConfig({ SETUP_CODE_TTL_HOURS: "0" })).toThrow(/SETUP_CODE_TTL_HOURS/);
    let now = Date.parse("2030-01-01T00:00:00Z");
    const firstRun = new FirstRunSetup(server.services.db, { ttlMs: 24 * 3_600_000, now: () => now });
    const announced: Array<[string, Date]> = [];
    firstRun.onNewCode((code, expiresAt) => announced.push([code, expiresAt]));
    expect(await firstRun.ensureCode()).toBe(true);
    expect(announced).toEqual([[firstRun.setupCode(), new Date("2030-01-02T00:00:00Z")]]);
    now += 24 * 3_600_000;
    const err = await firstRun.createFirstUser({ setupCode: announced[0]![0], email: "late@hospital.example", password: PASSWORD }).then(
      () => null,
      (e) => e,
    );
    expect(err).toMatchObject({ status: 403, code: "setup_code_expired" });
    expect(err.message).toContain("restart the server");
    // Not renewed behind the operator's back: the same expired code until a restart.
    expect(await firstRun.ensureCode()).toBe(false);
    expect(announced).toHaveLength(1);
    expect(await server.services.auth.users.findByEmail("late@hospital.example")).toBeUndefined();
  });

  it("an administrator made on the command line spends the code; when the last administrator is erased, a new code is printed and works, the old one not", async () => {
    const first = printed[0]!;
    expect(printed).toEqual([first]);
    const admin = await server.services.auth.users.create({ email: "cli-admin@hospital.example", password: PASSWORD, role: "admin" });
    const member = await server.services.auth.users.create({ email: "member@hospital.example", password: PASSWORD });
    const spent = await setup({ setup_code: first, email: "stranger@hospital.example", password: PASSWORD });
    expect(spent.status).toBe(409);
    expect((await json(spent)).error.code).toBe("setup_done");
    expect(await json(await fetch(`${server.url}/v1/setup`))).toMatchObject({ users_exist: true, admin_exists: true });

    await server.services.erasure.begin({ userId: admin.id, via: "session" });
    await server.services.erasure.finish(admin.id);
    // A member is left, but no one who can manage users: the server prints a new code.
    expect(printed).toHaveLength(2);
    const second = printed[1]!;
    expect(second).not.toBe(first);
    expect(await json(await fetch(`${server.url}/v1/setup`))).toMatchObject({ users_exist: true, admin_exists: false });
    expect(printed).toHaveLength(2); // asking again does not print another

    const old = await setup({ setup_code: first, email: "stranger@hospital.example", password: PASSWORD });
    expect(old.status).toBe(403);
    expect((await json(old)).error.code).toBe("invalid_setup_code");
    const taken = await setup({ setup_code: second, email: "member@hospital.example", password: PASSWORD });
    expect(taken.status).toBe(409);
    expect((await json(taken)).error.code).toBe("email_taken");
    const made = await setup({ setup_code: second, email: "new-admin@hospital.example", password: PASSWORD });
    expect(made.status).toBe(201);
    expect((await server.services.auth.users.findByEmail("new-admin@hospital.example"))?.role).toBe("admin");
    expect((await server.services.auth.users.findById(member.id))?.role).toBe("member");
    expect((await setup({ setup_code: second, email: "another@hospital.example", password: PASSWORD })).status).toBe(409);
    expect(await json(await fetch(`${server.url}/v1/setup`))).toMatchObject({ admin_exists: true });
    expect(printed).toHaveLength(2);
  });
});
