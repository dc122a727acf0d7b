import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config.js";
import { createServices, type Services } from "../../src/services.js";
import { createUserWithKey, type UserWithKey } from "../helpers/auth.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import type { TestServer } from "../helpers/server.js";
import { haveFixturePython, servingFixtures } from "../fixtures/serving/fixtures.js";
import { publishFixture } from "../fixtures/serving/publish.js";
import { filesUnder, plant } from "./deletion-fixtures.js";
import { api, waitFor } from "./experiments-fixtures.js";

// A kill -9 of `./builder serve` in the middle of deleting an experiment: the row stays `deleting`, nothing of the
// model serves, and the next start finishes the deletion. The experiment's model folder holds many report files so
// that the deletion is still removing them when the kill lands (the test checks that it did land mid-way).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FIGURES = 20_000;

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

vi.setConfig({ testTimeout: 180_000 });

describe.skipIf(!process.env.TEST_DATABASE_URL || !haveFixturePython)("kill -9 of serve mid-deletion", () => {
  let db: Awaited<ReturnType<typeof createThrowawayDatabase>>;
  let dataDir: string;
  let env: Record<string, string>;
  let services: Services;
  let alice: UserWithKey;
  const children: ChildProcess[] = [];

  const serve = async (port: number) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "serve", "--port", String(port)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", process.env.TEST_LOG_LEVEL ? "inherit" : "ignore"],
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(`${url} to answer`, async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok, 60_000, 200);
    return { child, url };
  };

  beforeAll(async () => {
    db = await createThrowawayDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-deletion-crash-"));
    env = { DATABASE_URL: db.url, BUILDER_DATA_DIR: dataDir, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn", JOB_LEASE_S: "3" };
    // The test's own view of the database and bucket; no runner, so it never resumes deletions itself.
    services = await createServices(parseConfig({ ...env, LOG_LEVEL: "silent" }), { runner: false });
    alice = await createUserWithKey({ services } as TestServer);
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    await services?.close();
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("the next start finishes the deletion; the model never serves in between", async () => {
    const server = { services } as TestServer;
    const model = await publishFixture(server, alice.userId, 3, servingFixtures().modelDir("tabular_binary"), 1, false);
    await publishFixture(server, alice.userId, 4, servingFixtures().modelDir("tabular_binary"), 1, false); // kept
    for (let i = 0; i < FIGURES; i++) plant(dataDir, `bucket/models/${alice.userId}/3/v1/figures/f${i}.svg`, "<svg/>");
    const mine = (f: string) => f.startsWith(`bucket/models/${alice.userId}/3/`);
    const before = filesUnder(dataDir);
    expect(before.filter(mine).length).toBe(FIGURES + 2);

    const port = await freePort();
    const first = await serve(port);
    const client = api(first.url, alice.key);
    expect(
      (await client.post("/v1/experiments/3/predict", { message: servingFixtures().expected["tabular_binary/row0"].row })).status,
    ).toBe(201);
    expect((await client.del("/v1/experiments/3")).status).toBe(202);
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));

    // Cut short: the row is still `deleting`, some files are left, and no models row serves it.
    const row = await services.experiments.repo.byId(model.experimentUuid);
    expect(row?.status).toBe("deleting");
    const left = filesUnder(dataDir).filter(mine).length;
    expect(left).toBeGreaterThan(0);
    expect(await services.experiments.repo.modelsOf(model.experimentUuid)).toEqual([]);

    const second = await serve(port);
    const again = api(second.url, alice.key);
    // While the restarted server finishes it, /predict for it is 404, never an answer.
    expect((await again.post("/v1/experiments/3/predict", { message: servingFixtures().expected["tabular_binary/row0"].row })).status).toBe(
      404,
    );
    await waitFor("the deletion to finish", async () => !(await services.experiments.repo.byId(model.experimentUuid)), 120_000, 200);
    expect(filesUnder(dataDir).filter(mine)).toEqual([]);
    expect((await again.get("/v1/experiments/3")).status).toBe(404);
    expect((await again.get("/v1/experiments/4")).status).toBe(200);
    expect(filesUnder(dataDir)).toEqual(expect.arrayContaining([`bucket/models/${alice.userId}/4/v1/model.onnx`]));
    second.child.kill("SIGKILL");
  });
});
