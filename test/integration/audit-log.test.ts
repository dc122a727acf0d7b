import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { api, tabularZip, waitFor } from "./experiments-fixtures.js";

// GET /v1/audit: the user's own record of sign-ins, keys, uploads, deletions, downloads and erasure, as JSON and
// CSV; append-only in the database itself; kept after the account is erased, without names or paths.

describe.skipIf(!haveFixturePython)("the audit log", () => {
  let server: TestServer;
  let alice: UserWithKey;
  let bob: UserWithKey;

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    alice = await createUserWithKey(server);
    bob = await createUserWithKey(server);
  });
  afterAll(async () => {
    await server?.teardown();
  });

  it("records what the user did, shows only their own entries, exports CSV, refuses changes, and outlives erasure", async () => {
    const signIn = await fetch(`${server.url}/v1/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: alice.email, password: alice.password }),
    });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const { csrf_token } = (await signIn.json()) as { csrf_token: string };
    const dash = { cookie, "x-csrf-token": csrf_token, "content-type": "application/json" };
    const key = (await (
      await fetch(`${server.url}/v1/api-keys`, { method: "POST", headers: dash, body: JSON.stringify({ name: "temp" }) })
    ).json()) as { id: string; prefix: string };
    expect((await fetch(`${server.url}/v1/api-keys/${key.id}`, { method: "DELETE", headers: dash })).status).toBe(200);
    const zipPath = `${alice.userId}/juan-perez-scan/data.zip`; // a name that is patient data
    const zip = tabularZip().zip;
    expect(
      (
        await fetch(`${server.url}/v1/files/${zipPath}`, {
          method: "PUT",
          headers: bearer(alice.key, { "content-type": "application/zip" }),
          body: zip,
        })
      ).status,
    ).toBe(201);
    expect((await fetch(`${server.url}/v1/files/${zipPath}`, { method: "DELETE", headers: bearer(alice.key) })).status).toBe(204);
    await publishFixture(server, alice.userId, 5, servingFixtures().modelDir("tabular_binary"));
    expect((await fetch(`${server.url}/v1/models/5/download`, { headers: bearer(alice.key) })).status).toBe(200);
    const client = api(server.url, alice.key);
    expect((await client.del("/v1/experiments/5")).status).toBe(202);
    await api(server.url, bob.key).del("/v1/experiments/5"); // 404: not recorded for anyone

    const log = await client.get("/v1/audit");
    expect(log.status).toBe(200);
    expect(log.body.data.map((e: { action: string }) => e.action)).toEqual([
      "experiment_deleted",
      "model_downloaded",
      "file_deleted",
      "file_uploaded",
      "api_key_revoked",
      "api_key_created",
      "sign_in",
    ]);
    expect(log.body.data[0]).toMatchObject({ target: "experiment 5", via: "api_key", details: { key_id: alice.keyId } });
    expect(log.body.data[4]).toMatchObject({ target: `key ${key.prefix}`, via: "session" });
    expect(log.body.data[3].details).toMatchObject({ size: zip.length });
    expect(JSON.stringify(log.body)).not.toContain("juan-perez");
    expect((await api(server.url, bob.key).get("/v1/audit")).body.total).toBe(0);
    expect((await client.get("/v1/audit?limit=2")).body).toMatchObject({ total: 7, has_more: true });
    expect((await client.get("/v1/audit?limit=0")).status).toBe(400);

    const csv = await fetch(`${server.url}/v1/audit.csv`, { headers: bearer(alice.key) });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = (await csv.text()).trimEnd().split("\r\n");
    expect(lines[0]).toBe("seq,at,action,via,target,details");
    expect(lines.slice(1).map((l) => l.split(",")[2])).toEqual([
      "sign_in",
      "api_key_created",
      "api_key_revoked",
      "file_uploaded",
      "file_deleted",
      "model_downloaded",
      "experiment_deleted",
    ]);

    // Append-only, whoever writes: the database refuses.
    await expect(server.services.db.execute(sql`update audit_events set action = 'x'`)).rejects.toThrow();
    await expect(server.services.db.execute(sql`delete from audit_events`)).rejects.toThrow();

    const erase = await fetch(`${server.url}/v1/me`, {
      method: "DELETE",
      headers: bearer(alice.key, { "content-type": "application/json" }),
      body: JSON.stringify({ password: alice.password }),
    });
    expect(erase.status).toBe(202);
    await waitFor("the erasure", async () => !(await server.services.auth.users.findById(alice.userId)), 30_000, 100);
    const kept = (await server.services.db.execute(
      sql`select action, target, details::text as details from audit_events where actor_id = ${alice.userId} order by seq`,
    )) as unknown as
      | { rows: Array<{ action: string; target: string | null; details: string }> }
      | Array<{ action: string; target: string | null; details: string }>;
    const rows = Array.isArray(kept) ? kept : kept.rows;
    expect(rows.map((r) => r.action).slice(-2)).toEqual(["account_erasure_requested", "account_erased"]);
    expect(rows.length).toBe(9);
    expect(JSON.stringify(rows)).not.toContain(alice.email);
    expect(JSON.stringify(rows)).not.toContain("juan-perez");
  });
});
