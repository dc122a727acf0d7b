/**
 * One Builder server for batch-bombs.ts, in its own process so that its event loop and memory are the only ones
 * measured: the code under `argv[2]` (a checkout's root: this one, or another commit's for the "before" side), PGlite
 * in a temporary folder, logs off, two users ("a" and "b") with an API key each and the serving fixtures'
 * tabular_binary model published as their experiment 1. Reports { url, keys } on IPC, then answers:
 *   "mark"  { rss, loopMaxMs }: RSS now; the peak and the event loop's longest delay since the last "mark" restart
 *   "peak"  { peak, loopMaxMs, rss }: the largest RSS sampled (every 10 ms) and the longest loop delay since "mark"
 *   "stop"  stops the server and removes its folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "../.."));
const { parseConfig } = await import(path.join(root, "src/config.ts"));
const { startServer } = await import(path.join(root, "src/server.ts"));
const { publishFixture } = await import(path.join(root, "test/fixtures/serving/publish.ts"));
const { servingFixtures } = await import(path.join(root, "test/fixtures/serving/fixtures.ts"));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-batch-"));
const config = parseConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir });
const running = await startServer(config, { port: 0, host: "127.0.0.1" });
const { auth } = running.services;
const keys: Record<string, string> = {};
for (const name of ["a", "b"]) {
  const user = await auth.users.create({ email: `bench-${name}-${process.pid}@bench.example`, password: `bench password ${process.pid}` });
  keys[name] = (await auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "bench", rateLimitPerMinute: 1_000_000 })).key;
  await publishFixture({ ...running, dataDir }, user.id, 1, servingFixtures().modelDir("tabular_binary"));
}

let peak = 0;
setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10).unref();
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
process.on("message", async (m: string) => {
  if (m === "mark") {
    loop.reset();
    peak = process.memoryUsage().rss;
    process.send!({ rss: peak });
  } else if (m === "peak") {
    process.send!({ peak, loopMaxMs: loop.max / 1e6, rss: process.memoryUsage().rss });
  } else if (m === "stop") {
    await running.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send!({ url: running.url, keys });
