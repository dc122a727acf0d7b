/**
 * HTTP load generator for bench/serve/run.ts, in its own process so the client's CPU (building requests,
 * reading ~600 KB answers with maps) is not counted as the server's. Driven over IPC:
 * {url, path, key, body, concurrency, seconds} -> {type: "started"}, then {type: "done", latencies, starts, errors, seconds}.
 * The requests go through raw-load.mjs, which allocates nothing per answer: a client that does (undici's
 * arrayBuffer(), as this file used before) adds its own garbage collections to the measured tail.
 */
import { closeAll, runLoad } from "./raw-load.mjs";

interface Job {
  url: string;
  path: string;
  key: string;
  body: string;
  concurrency: number;
  seconds: number;
}

process.on("message", (job: Job | { type: "exit" }) => {
  if ("type" in job) {
    closeAll();
    process.exit(0);
  }
  runLoad({ ...job, warmup: 0.5 }, () => process.send!({ type: "started" })).then(
    (r) => process.send!({ type: "done", ...r }),
    (err) => process.send!({ type: "done", latencies: [], starts: [], errors: 1, firstError: String(err), seconds: job.seconds }),
  );
});
