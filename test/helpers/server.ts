import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseConfig } from "../../src/config.js";
import { startServer, type RunningServer } from "../../src/server.js";
import { createThrowawayDatabase, type DbTarget } from "./db.js";
import { storageEnv } from "./storage.js";

export interface TestServer extends RunningServer {
  dataDir: string;
  target: DbTarget;
  /** The variables that point at this server's bucket (none for its data folder's, S3_* on S3): for a CLI run on its data. */
  storageEnv: Record<string, string>;
  /** Stops the server, drops its database, removes its data folder. */
  teardown(): Promise<void>;
}

/**
 * A real Builder on a random port with its own data folder and its own database
 * (a fresh PGlite, or a throwaway database on the real Postgres), and its own bucket: the data folder's bucket/,
 * or a fresh S3 bucket on the stand-in when the storage suite runs on S3 (test/helpers/storage.ts).
 */
export async function startTestServer(target: DbTarget, env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-test-"));
  const throwaway = target === "postgres" ? await createThrowawayDatabase() : undefined;
  const storage = { ...(await storageEnv()), ...Object.fromEntries(Object.entries(env).filter(([k]) => /^(S3_|AWS_)/.test(k))) };
  const config = parseConfig({
    NODE_ENV: "test",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    BUILDER_DATA_DIR: dataDir,
    ...(throwaway ? { DATABASE_URL: throwaway.url } : {}),
    ...storage,
    ...env,
  });
  const running = await startServer(config, { port: 0, host: "127.0.0.1" });
  return {
    ...running,
    dataDir,
    target,
    storageEnv: storage,
    teardown: async () => {
      await running.stop();
      await throwaway?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
