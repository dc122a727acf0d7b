/**
 * What an image model's inference thread does after it has been idle: the small CNN is served over HTTP at c=1 for
 * 3 s, then left alone (--idle S seconds, or --prior: CamNet at c=8 for 12 s meanwhile, as in vs-peer.ts's plan where
 * each model waits while the others are measured), then measured at c=1 for 12 s (--measure S). Runs itself under
 * --trace-gc and prints the latencies, and the collections and heap of every isolate during the measured window.
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/idle-gc.ts [--idle 12 | --prior] [--measure 12] [--v8 "--some-flag ..."]
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/idle-gc.ts --kind vision_resnet --others [--measure 12]
 *
 * --v8 passes V8 flags to the server process (to try a change without editing the code). --kind measures another
 * image model; --others also loads the other three models and sends each a few requests just before the measured
 * window, as vs-peer.ts's answer check does before its first rounds (their threads then go idle while it runs).
 */
import { spawnSync } from "node:child_process";
import { startBenchServer, TABULAR_ROW } from "./bench-server.js";
import { tallyCollections } from "./gc-trace.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const PRIOR = args.includes("--prior");
const IDLE_S = Number(opt("idle", "0"));
const MEASURED_S = Number(opt("measure", "12"));
const KIND = opt("kind", "vision");
const OTHERS = args.includes("--others");
const KINDS = ["vision", "vision_resnet", "detection", "tabular"];
type Bench = Awaited<ReturnType<typeof startBenchServer>>;

function load(
  bench: Bench,
  id: number,
  concurrency: number,
  seconds: number,
  message: unknown = bench.photo,
): Promise<{ latencies: number[] }> {
  return new Promise((resolve) => {
    const on = (m: { type: string; latencies: number[] }) => {
      if (m.type !== "done") return;
      bench.client.off("message", on);
      resolve(m);
    };
    bench.client.on("message", on);
    bench.client.send({
      url: bench.running.url,
      path: `/v1/experiments/${id}/predict`,
      key: bench.key,
      body: JSON.stringify({ message }),
      concurrency,
      seconds,
    });
  });
}

async function child() {
  // Ids: the measured model 1, CamNet 4 (the --prior load), the others after.
  const ids: Record<string, number> = { [KIND]: 1 };
  if (PRIOR && KIND !== "vision_resnet") ids.vision_resnet = 4;
  if (OTHERS) for (const k of KINDS) ids[k] ??= 10 + KINDS.indexOf(k);
  const bench = await startBenchServer(ids);
  await load(bench, 1, 1, 3);
  if (PRIOR) await load(bench, ids.vision_resnet, 8, 12);
  if (IDLE_S) await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  if (OTHERS)
    for (const [k, id] of Object.entries(ids)) if (id !== 1) await load(bench, id, 1, 0.2, k === "tabular" ? TABULAR_ROW : undefined);
  console.log("MARK start");
  const r = await load(bench, 1, 1, MEASURED_S);
  console.log("MARK end");
  const s = [...r.latencies].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  console.log(
    `RESULT ${KIND} c=1 over HTTP, n ${s.length}  median ${q(0.5).toFixed(2)} ms  p99 ${q(0.99).toFixed(2)} ms  p99/median ${(q(0.99) / q(0.5)).toFixed(2)}`,
  );
  await bench.close();
  process.exit(0);
}

function parent() {
  const v8 = opt("v8", "").split(" ").filter(Boolean);
  const self = new URL(import.meta.url).pathname;
  const pass = [
    ...(PRIOR ? ["--prior"] : []),
    ...(OTHERS ? ["--others"] : []),
    "--idle",
    String(IDLE_S),
    "--measure",
    String(MEASURED_S),
    "--kind",
    KIND,
  ];
  const r = spawnSync(process.execPath, [...v8, "--trace-gc", "--import", "tsx", self, "--child", ...pass], {
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
  });
  const lines = r.stdout.split("\n");
  for (const l of lines) if (l.startsWith("RESULT ")) console.log(l.slice(7));
  const [from, to] = [lines.indexOf("MARK start"), lines.indexOf("MARK end")];
  const measured = from >= 0 && to > from ? lines.slice(from + 1, to) : []; // none when the child failed early
  const per = tallyCollections(measured);
  console.log(
    `# ${KIND}${OTHERS ? ", the other models warmed just before" : ""}, ${PRIOR ? "after CamNet at c=8 for 12 s" : `after ${IDLE_S} s idle`}${v8.length ? `, V8 flags ${v8.join(" ")}` : ""}: collections per isolate during the measured ${MEASURED_S} s`,
  );
  for (const [iso, g] of per)
    console.log(
      `${iso.padEnd(16)} mark-compact ${String(g.mc).padStart(3)} (${g.mcMs.reduce((a, b) => a + b, 0).toFixed(1)} ms)  scavenge ${String(g.scavenge).padStart(3)}  heap after the last ${g.lastHeap} MB`,
    );
  if (r.status !== 0) console.log(r.stderr.slice(-2000));
}

if (args.includes("--child")) await child();
else parent();
