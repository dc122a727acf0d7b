/**
 * One Builder server for chat-stall.ts, in its own process so that its event loop and memory are the only ones
 * measured: the code under `argv[2]` (a checkout's root: this one, or main's for the "before" side), PGlite in a
 * temporary folder, logs off, builtin chat, one user whose API key allows 600 requests a minute and who owns a
 * ready experiment 1 of `argv[3]` rows (default 260,000) with its model, planted by test/helpers/large-experiment.ts
 * of THIS checkout through the side's own repository: an identifier-like column, so its split lists every patient id
 * and its manifest codes every value. Reports { url, key, plantS } on IPC, then answers:
 *   "mark"  { rss }: RSS now; restarts the peak and the event-loop monitor
 *   "peak"  { peak, loopMaxMs, rss }: the largest RSS sampled (every 10 ms) and the longest loop delay since "mark"
 *   "stop"  stops the server and removes its folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { plantLargeExperiment } from "../../test/helpers/large-experiment.js";
import { ALL_KEY_SCOPES } from "../../src/auth/key-scopes.js";

const root = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "../.."));
const rows = Number(process.argv[3] ?? 260_000);
const { parseConfig } = await import(path.join(root, "src/config.ts"));
const { startServer } = await import(path.join(root, "src/server.ts"));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-chat-"));
const config = parseConfig({ NODE_ENV: "test", LOG_LEVEL: "silent", BUILDER_DATA_DIR: dataDir, CHAT_BACKEND: "builtin" });
const running = await startServer(config, { port: 0, host: "127.0.0.1" });
const { auth, experiments } = running.services;
const user = await auth.users.create({ email: `bench-chat-${process.pid}@bench.example`, password: `bench password ${process.pid}` });
const { key } = await auth.apiKeys.create(user.id, { scopes: ALL_KEY_SCOPES, name: "bench", rateLimitPerMinute: 600 });
const t0 = performance.now();
await plantLargeExperiment(experiments.repo, user.id, 1, rows);
const plantS = (performance.now() - t0) / 1000;
(globalThis as { gc?: () => void }).gc?.();

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
process.send!({ url: running.url, key, plantS });
