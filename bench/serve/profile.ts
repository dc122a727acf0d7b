/**
 * CPU profile of the server side of HTTP /predict for one model kind (where the HTTP overhead goes).
 *
 *   nice node --cpu-prof --cpu-prof-dir /tmp/prof --import tsx bench/serve/profile.ts [--kind vision] [--seconds 10] [--concurrency 1]
 *
 * Starts the server in this process, publishes the bench fixture, sends requests from the http-load.ts client
 * process, then prints the heaviest functions (self time) of this process's main thread.
 */
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import { ROOT, startBenchServer, TABULAR_ROW } from "./bench-server.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const KIND = opt("kind", "vision");
const SECONDS = Number(opt("seconds", "10"));
const CONCURRENCY = Number(opt("concurrency", "1"));

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}

async function main() {
  const bench = await startBenchServer({ [KIND]: 1 });
  const { running, key, client } = bench;
  const message = KIND === "tabular" ? TABULAR_ROW : bench.photo;
  const inspector = new Session();
  inspector.connect();
  await inspector.post("Profiler.enable");
  let started = false;
  const result = await new Promise<{ latencies: number[] }>((resolve) => {
    client.on("message", (m: { type: string; latencies: number[] }) => {
      if (m.type === "started" && !started) {
        started = true;
        void inspector.post("Profiler.start");
      }
      if (m.type === "done") resolve(m);
    });
    client.send({
      url: running.url,
      path: "/v1/experiments/1/predict",
      key,
      body: JSON.stringify({ message }),
      concurrency: CONCURRENCY,
      seconds: SECONDS,
    });
  });
  const { profile } = (await inspector.post("Profiler.stop")) as { profile: { nodes: Node[]; samples: number[]; timeDeltas: number[] } };
  const self = new Map<string, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const n = byId.get(id)!;
    const k = `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*node_modules\//, "nm:").replace(ROOT, "")}:${n.callFrame.lineNumber + 1}`;
    self.set(k, (self.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const n = result.latencies.length;
  const sorted = [...self.entries()].sort((a, b) => b[1] - a[1]);
  const total = sorted.reduce((s, [, v]) => s + v, 0);
  console.log(
    `# ${KIND}: ${n} requests in ${SECONDS}s at c=${CONCURRENCY}; main-thread samples ${total.toFixed(0)} ms = ${(total / n).toFixed(2)} ms/request (incl. idle)`,
  );
  for (const [k, v] of sorted.slice(0, 40)) console.log(`${(v / n).toFixed(3).padStart(8)} ms/req  ${k}`);
  if (process.env.PROFILE_OUT) fs.writeFileSync(process.env.PROFILE_OUT, JSON.stringify(profile));
  await bench.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
