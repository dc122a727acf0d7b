/**
 * The event loop while a batch of rows is scored: the worst delay a concurrent request would see (Node's
 * monitorEventLoopDelay, 10 ms resolution), for a 20,000-row CSV on the 4-column tabular model (inline on the event
 * loop). Prints max and p99 lag during the batch.
 *
 *   npx tsx bench/batch/event-loop-lag.ts [--rows 20000]
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startBenchServer } from "../serve/bench-server.js";

const i = process.argv.indexOf("--rows");
const ROWS = i > 0 ? Number(process.argv[i + 1]) : 20_000;
const bench = await startBenchServer({ tabular: 1 });
const url = bench.running.url;
const auth = { authorization: `Bearer ${bench.key}` };
const csv =
  [
    "patient_id,age,sex,bmi,site",
    ...Array.from({ length: ROWS }, (_, k) => `P${k},${20 + (k % 70)},${k % 2 ? "M" : "F"},${18 + (k % 300) / 10},north`),
  ].join("\n") + "\n";

// The same polling for a second with no batch: the floor this process's own client and the server reach anyway.
const idle = monitorEventLoopDelay({ resolution: 10 });
idle.enable();
for (const end = performance.now() + 1000; performance.now() < end;) {
  await (await fetch(`${url}/v1/batches/00000000-0000-0000-0000-000000000000`, { headers: auth })).arrayBuffer();
  await new Promise((r) => setTimeout(r, 50));
}
idle.disable();
console.log(`no batch: event-loop delay max ${(idle.max / 1e6).toFixed(1)} ms, p99 ${(idle.percentile(99) / 1e6).toFixed(1)} ms`);

const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
const t0 = performance.now();
const res = await fetch(`${url}/v1/models/1/batch`, { method: "POST", headers: { ...auth, "content-type": "text/csv" }, body: csv });
const { batch_id } = (await res.json()) as { batch_id: string };
for (;;) {
  const b = (await (await fetch(`${url}/v1/batches/${batch_id}`, { headers: auth })).json()) as { status: string };
  if (b.status === "done" || b.status === "failed") break;
  await new Promise((r) => setTimeout(r, 50));
}
h.disable();
const s = (performance.now() - t0) / 1000;
console.log(
  `${ROWS} rows in ${s.toFixed(2)} s (${(ROWS / s).toFixed(0)} rows/s); event-loop delay max ${(h.max / 1e6).toFixed(1)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms`,
);
await bench.close();
process.exit(0);
