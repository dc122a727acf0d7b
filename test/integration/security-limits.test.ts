import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { primaryTarget } from "../helpers/db.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { api, dataRequest, waitForStatus, type Api } from "./experiments-fixtures.js";

// Issue 19, finding 3: over-long names are a 400 (they were a 500, ENAMETOOLONG), the events stream checks
// Last-Event-ID, and data files are created owner-only (they were 0644).

describe("over-long names, bad Last-Event-ID, file modes", () => {
  let server: TestServer;
  let user: UserWithKey & { client: Api };

  beforeAll(async () => {
    server = await startTestServer(primaryTarget());
    const u = await createUserWithKey(server);
    user = { ...u, client: api(server.url, u.key) };
  });
  afterAll(async () => server?.teardown());

  const zip = makeZip({ "data.csv": "id,label\n1,a\n" });
  const long = "d".repeat(240);

  it.each([
    ["folder", () => `${user.userId}/${long}/data.zip`],
    ["file", () => `${user.userId}/exp/${long}.zip`],
  ])("a %s name of 240+ characters is a 400 naming the limit on every files and datasets route", async (_what, objectPath) => {
    const p = objectPath();
    const put = await fetch(`${server.url}/v1/files/${p}`, { method: "PUT", headers: bearer(user.key), body: zip });
    expect(put.status).toBe(400);
    const body = (await put.json()) as any;
    expect(body.error.code).toBe("invalid_request");
    expect(body.error.message).toMatch(/at most 200 characters/);
    const form = new FormData();
    form.append("path", p);
    form.append("file", new Blob([zip]), "data.zip");
    expect((await fetch(`${server.url}/v1/files`, { method: "POST", headers: bearer(user.key), body: form })).status).toBe(400);
    expect((await fetch(`${server.url}/v1/files/${p}`, { method: "DELETE", headers: bearer(user.key) })).status).toBe(400);
    expect(
      (await user.client.post("/v1/datasets/validate", { zip_gcloud: p, task: "data", label_cols: ["label"], data_cols: ["id"] })).status,
    ).toBe(400);
    expect((await user.client.get(`/v1/datasets/columns?zip_gcloud=${encodeURIComponent(p)}`)).status).toBe(400);
    expect((await user.client.post("/v1/experiments", dataRequest(user.userId, 1, p, ["id"]))).status).toBe(400);
  });

  it("a name of exactly 200 characters is accepted", async () => {
    const res = await fetch(`${server.url}/v1/files/${user.userId}/${"e".repeat(200)}/${"f".repeat(196)}.zip`, {
      method: "PUT",
      headers: bearer(user.key),
      body: zip,
    });
    expect(res.status).toBe(201);
  });

  it.each(["99999999999999999999999", "-1", "abc", "1.5", "1e3"])(
    "Last-Event-ID %s is a 400 invalid_request, not an empty stream",
    async (value) => {
      expect(
        (await user.client.post("/v1/experiments", dataRequest(user.userId, 7, `${user.userId}/none/d.zip`, ["id"]))).status,
      ).toBeLessThan(300);
      const res = await fetch(`${server.url}/v1/experiments/7/events`, { headers: bearer(user.key, { "last-event-id": value }) });
      expect(res.status).toBe(400);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.details[0].field).toBe("last-event-id");
    },
  );

  it("a valid Last-Event-ID replays only the later events", async () => {
    const all = await (await fetch(`${server.url}/v1/experiments/7/events`, { headers: bearer(user.key) })).text();
    const ids = [...all.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids.length).toBeGreaterThan(1);
    const later = await (
      await fetch(`${server.url}/v1/experiments/7/events`, { headers: bearer(user.key, { "last-event-id": String(ids[0]) }) })
    ).text();
    expect([...later.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual(ids.slice(1));
  });

  it("an upload is 0600 in 0700 folders, and a job's log is 0600", async () => {
    const zip = makeZip({ "data.csv": "id,label\n1,a\n" });
    expect(
      (await fetch(`${server.url}/v1/files/${user.userId}/modes/data.zip`, { method: "PUT", headers: bearer(user.key), body: zip })).status,
    ).toBe(201);
    const mode = (p: string) => fs.statSync(path.join(server.dataDir, p)).mode & 0o777;
    expect(mode(`bucket/${user.userId}/modes/data.zip`)).toBe(0o600);
    expect(mode(`bucket/${user.userId}/modes`)).toBe(0o700);
    expect(mode(`bucket/${user.userId}`)).toBe(0o700);
    expect(mode("bucket")).toBe(0o700);
    const posted = await user.client.post("/v1/experiments", dataRequest(user.userId, 3, `${user.userId}/modes/data.zip`, ["id"]));
    expect(posted.status).toBe(202);
    await waitForStatus(user.client, 3, ["failed", "invalid_dataset", "ready"]);
    const logs = fs.readdirSync(path.join(server.dataDir, "logs"));
    expect(logs.length).toBeGreaterThan(0);
    for (const f of logs) expect(mode(`logs/${f}`)).toBe(0o600);
    expect(mode("logs")).toBe(0o700);
  });
});
