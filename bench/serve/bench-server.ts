/**
 * What bench/serve/run.ts and profile.ts share: the benchmark models (make_fixtures.py --bench), a server in this
 * process on a throwaway data folder with one user and key, the models published as experiments 1.., the test
 * photo as a data: URI, and the HTTP load client (http-load.ts) in its own process.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, fork } from "node:child_process";
import { parseConfig } from "../../src/config.js";
import { startServer } from "../../src/server.js";
import { publishFixture } from "../../test/fixtures/serving/publish.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
/** The 4-column tabular fixture's sample row. */
export const TABULAR_ROW = [63, 1, 27.5, 2];

/** Env variables that pass through to the server's config, so a run can vary them. */
const PASS_THROUGH = [
  "ORT_INTRA_OP_THREADS",
  "SERVING_MAX_BATCH",
  "SERVING_THREADS_PER_MODEL",
  "GRADCAM_MAX_SIDE",
  // A Postgres server instead of the embedded PGlite (predict-http.ts --pg makes a throwaway database for it).
  "DATABASE_URL",
  "MONITORING_FLUSH_MS",
];

/** publish false: the models are published (without warming them) only when the caller calls publish(). */
export async function startBenchServer(ids: Record<string, number>, opts: { publish?: boolean } = {}) {
  const fxDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-serve-fx-"));
  execFileSync(path.join(ROOT, "pipelines/.venv/bin/python"), [
    path.join(ROOT, "test/fixtures/serving/make_fixtures.py"),
    "--bench",
    fxDir,
  ]);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-serve-"));
  const config = parseConfig({
    NODE_ENV: "production",
    LOG_LEVEL: "silent",
    BUILDER_DATA_DIR: dataDir,
    RATE_LIMIT_PER_MINUTE: "100000000",
    ORT_INTRA_OP_THREADS: "0",
    ...Object.fromEntries(PASS_THROUGH.filter((k) => process.env[k]).map((k) => [k, process.env[k]!])),
  });
  const running = await startServer(config, { port: 0, host: "127.0.0.1" });
  const { services } = running;
  const user = await services.auth.users.create({ email: "bench@example.org", password: "bench-password-123" });
  const { key } = await services.auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "bench" });
  const publish = async (warm = true) => {
    for (const [kind, id] of Object.entries(ids)) await publishFixture({ services } as never, user.id, id, path.join(fxDir, kind), 1, warm);
  };
  if (opts.publish !== false) await publish();
  const photo = `data:image/jpeg;base64,${fs.readFileSync(path.join(fxDir, "photo.jpg")).toString("base64")}`;
  const client = fork(path.join(ROOT, "bench/serve/http-load.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return {
    config,
    running,
    services,
    user,
    key,
    fxDir,
    photo,
    client,
    publish,
    async close() {
      client.send({ type: "exit" });
      await running.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(fxDir, { recursive: true, force: true });
    },
  };
}
