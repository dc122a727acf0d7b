/**
 * Request driver for bench/memory/run.ts, in its own process so the client's buffers are not counted in the
 * server's resident memory. Driven over IPC: {url, requests, concurrency, count | seconds} -> {sent, statuses}.
 * Each request is {method, path, headers, body (base64)}; the answer is read in full and dropped.
 */
import { Pool } from "undici";

export interface BenchRequest {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
interface Job {
  url: string;
  requests: BenchRequest[];
  concurrency: number;
  count?: number;
  seconds?: number;
}

let pool: Pool | undefined;

async function run(job: Job) {
  pool ??= new Pool(job.url, { connections: 32 });
  const bodies = job.requests.map((r) => (r.body === undefined ? undefined : Buffer.from(r.body, "base64")));
  const statuses: Record<string, Record<number, number>> = {};
  let sent = 0;
  const end = job.seconds ? Date.now() + job.seconds * 1000 : Infinity;
  const more = () => (job.count !== undefined ? sent < job.count : Date.now() < end);
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (more()) {
        const i = sent++ % job.requests.length;
        const r = job.requests[job.count !== undefined ? i : Math.floor(Math.random() * job.requests.length)];
        let status = 0;
        try {
          const res = await pool!.request({
            method: r.method as "GET",
            path: r.path,
            headers: r.headers,
            body: bodies[job.requests.indexOf(r)],
          });
          await res.body.arrayBuffer();
          status = res.statusCode;
        } catch {
          status = -1; // connection refused or reset
        }
        const byName = (statuses[r.name] ??= {});
        byName[status] = (byName[status] ?? 0) + 1;
      }
    }),
  );
  return { sent, statuses };
}

process.on("message", (job: Job | { type: "exit" }) => {
  if ("type" in job) return void pool?.close().then(() => process.exit(0));
  run(job).then((r) => process.send!({ type: "done", ...r }));
});
