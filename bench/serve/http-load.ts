/**
 * HTTP load generator for bench/serve/run.ts, in its own process so the client's CPU (building requests,
 * reading ~700 KB answers with maps) is not counted as the server's. Driven over IPC:
 * {url, path, key, body, concurrency, seconds} -> {latencies, errors, seconds}.
 */
import { Pool } from "undici";

interface Job { url: string; path: string; key: string; body: string; concurrency: number; seconds: number }

const pools = new Map<string, Pool>();

async function run(job: Job) {
  let pool = pools.get(job.url);
  if (!pool) pools.set(job.url, (pool = new Pool(job.url, { connections: 64 })));
  const once = async () => {
    const res = await pool!.request({ method: "POST", path: job.path, headers: { authorization: `Bearer ${job.key}`, "content-type": "application/json" }, body: job.body });
    // The answer is read in full but not decoded to a string: on this 2-core machine the client shares the cores
    // with the server, and decoding ~700 KB of JSON text per vision answer would be measured as server slowness.
    const bytes = await res.body.arrayBuffer();
    if (res.statusCode !== 201) throw new Error(`HTTP ${res.statusCode}: ${Buffer.from(bytes).toString("utf8", 0, 200)}`);
  };
  const warmEnd = Date.now() + 500;
  await Promise.all(Array.from({ length: job.concurrency }, async () => { while (Date.now() < warmEnd) await once().catch(() => undefined); }));
  const latencies: number[] = [];
  /** When each timed request started (epoch ms, comparable across processes), in the order of latencies. */
  const starts: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  process.send!({ type: "started" });
  const t0 = performance.now();
  const end = t0 + job.seconds * 1000;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        try {
          await once();
          latencies.push(performance.now() - s);
          starts.push(performance.timeOrigin + s);
        } catch (err) {
          errors++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  return { latencies, starts, errors, firstError, seconds: (performance.now() - t0) / 1000 };
}

process.on("message", (job: Job | { type: "exit" }) => {
  if ("type" in job) {
    void Promise.all([...pools.values()].map((p) => p.close())).then(() => process.exit(0));
    return;
  }
  run(job).then((r) => process.send!({ type: "done", ...r }), (err) => process.send!({ type: "done", latencies: [], errors: 1, firstError: String(err), seconds: job.seconds }));
});
