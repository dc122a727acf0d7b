/**
 * One Builder server for dicom-bombs.ts, in its own process so that its RSS is the only one measured: the code under
 * `argv[2]` (a checkout's root: this one, or another commit's tree for the "before" side), PGlite in a temporary
 * folder, logs off, 127.0.0.1 allowed as an image host (the bench's DICOMweb server), one user with an API key of an
 * unreachable rate limit, and the serving fixture's binary image classifier (`argv[3]`, a model folder) published as
 * experiment 1. Reports { url, key, userId } on IPC; answers "rss" with the RSS now and "peak" with the largest RSS
 * sampled (every 10 ms) since the last "peak".
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

const root = path.resolve(process.argv[2]);
const modelDir = path.resolve(process.argv[3]);
const { parseConfig } = await import(path.join(root, "src/config.ts"));
const { startServer } = await import(path.join(root, "src/server.ts"));
const { publishFixture } = await import(path.join(root, "test/fixtures/serving/publish.ts"));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-dicom-"));
const config = parseConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir, FETCH_ALLOW_HOSTS: "127.0.0.1" });
const running = await startServer(config, { port: 0, host: "127.0.0.1" });
const { auth } = running.services;
const user = await auth.users.create({ email: `bench-${process.pid}@bench.example`, password: `bench password ${process.pid}` });
const { key } = await auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "bench", rateLimitPerMinute: 1_000_000 });
await publishFixture({ services: running.services }, user.id, 1, modelDir);

let peak = 0;
setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10).unref();
process.on("message", async (m: string) => {
  if (m === "rss") process.send!({ rss: process.memoryUsage().rss });
  else if (m === "peak") {
    process.send!({ peak });
    peak = process.memoryUsage().rss;
  } else if (m === "stop") {
    await running.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send!({ url: running.url, key, userId: user.id });
