/**
 * Builder's /predict side by side with the FastAPI + onnxruntime peer (what a Python team would run instead),
 * in one run, rounds alternated, on the same model files:
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/vs-peer.ts --peer-venv /work/peer-venv \
 *     [--rounds 3] [--seconds 5] [--plan "vision_resnet:1,8,32;vision:1,8;detection:1,8;tabular:1,8"] [--peers 2] \
 *     [--client shared|raw]
 *
 * The peer and its runner live outside the repository, in ../shared/peer-fastapi (--peer DIR or PEER_DIR to put
 * it elsewhere); its Python environment is named by --peer-venv or PEER_VENV (its README says how to make one).
 * Without either, the run is skipped with a message, not failed. This script makes the benchmark models
 * (test/fixtures/serving/make_fixtures.py --bench, the files both servers load), then hands over to the peer's
 * bench.py, which starts Builder (this checkout, its own startServer) and the peer with uvicorn, checks that
 * their answers agree, measures each (model, concurrency) in alternating rounds from a separate load process,
 * and writes the raw figures; this script then prints the ratios as a table.
 *
 * --client raw: the same run, with the load process swapped for raw-load.mjs (same protocol, no allocation per answer)
 * for both servers. The peer folder is copied to a temporary one and its load.mjs replaced there; the shared folder is
 * not touched. The default, shared, is the peer's own load.mjs; its allocations per answer add a tail of their own
 * (client-floor.ts measures it).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const args = process.argv.slice(2);
const opt = (name: string, dflt?: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};

const sharedPeerDir = path.resolve(opt("peer", process.env.PEER_DIR ?? path.join(ROOT, "../shared/peer-fastapi"))!);
const client = opt("client", "shared")!;
if (client !== "shared" && client !== "raw") throw new Error(`--client is shared or raw, not ${client}`);
const venv = opt("peer-venv", process.env.PEER_VENV);
const skip = (why: string) => {
  console.log(`SKIPPED bench/serve/vs-peer: ${why}`);
  process.exit(0);
};
if (!fs.existsSync(path.join(sharedPeerDir, "bench.py")))
  skip(`no peer at ${sharedPeerDir} (bench.py missing); pass --peer DIR or set PEER_DIR`);
if (!venv) skip(`no peer Python environment: pass --peer-venv DIR or set PEER_VENV (see ${path.join(sharedPeerDir, "README.md")})`);
const python = path.join(path.resolve(venv!), "bin/python");
if (!fs.existsSync(python)) skip(`${python} does not exist: make the peer's venv as ${path.join(sharedPeerDir, "README.md")} says`);
const peerDir = client === "shared" ? sharedPeerDir : fs.mkdtempSync(path.join(os.tmpdir(), "builder-vs-peer-raw-"));
if (client === "raw") {
  fs.cpSync(sharedPeerDir, peerDir, { recursive: true });
  fs.chmodSync(peerDir, 0o755);
  fs.rmSync(path.join(peerDir, "load.mjs"), { force: true });
  fs.copyFileSync(path.join(ROOT, "bench/serve/raw-load.mjs"), path.join(peerDir, "load.mjs"));
}

interface Pooled {
  n: number;
  errors: number;
  median: number;
  p99: number;
  rps: number;
  cpu_ms: number;
}
interface Entry {
  kind: string;
  c: number;
  servers: Record<string, { pooled: Pooled }>;
  [ratio: string]: unknown;
}

const fx = fs.mkdtempSync(path.join(os.tmpdir(), "builder-vs-peer-fx-"));
const out = opt("out", path.join(os.tmpdir(), `builder-vs-peer-${Date.now()}.json`))!;
try {
  execFileSync(path.join(ROOT, "pipelines/.venv/bin/python"), [path.join(ROOT, "test/fixtures/serving/make_fixtures.py"), "--bench", fx], {
    stdio: "inherit",
  });
  const pass = ["rounds", "seconds", "warmup", "plan"].flatMap((k) => (opt(k) !== undefined ? [`--${k}`, opt(k)!] : []));
  const peers = opt("peers", "2")!;
  const r = spawnSync(
    python,
    [path.join(peerDir, "bench.py"), "--builder", ROOT, "--fixtures", fx, "--peers", peers, "--out", out, ...pass],
    { stdio: "inherit" },
  );
  if (r.status !== 0) {
    console.error(`the peer's bench.py failed (exit ${r.status})`);
    process.exit(1);
  }
  const { meta, results } = JSON.parse(fs.readFileSync(out, "utf8")) as { meta: Record<string, unknown>; results: Entry[] };
  const peer = `peer-w${peers.split(",").at(-1)}`;
  const f = (x: number, d = 1) => x.toFixed(d);
  console.log(
    `\n# Builder vs ${peer} (${meta.rounds} rounds x ${meta.seconds} s, alternated; load client: ${client === "raw" ? "raw-load.mjs" : "the peer's load.mjs"}; load ${(meta.loadavg_start as string[]).join(" ")} -> ${(meta.loadavg_end as string[]).join(" ")}; raw: ${out})`,
  );
  console.log(
    "| model | c | Builder req/s | peer req/s | Builder / peer (rounds' median) | median ms Builder vs peer | p99 ms Builder vs peer | CPU ms/req Builder vs peer |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const e of results) {
    const b = e.servers.builder.pooled,
      p = e.servers[peer].pooled;
    const ratio = e[`builder/${peer}`] as { rps: number };
    console.log(
      `| ${e.kind} | ${e.c} | ${f(b.rps)} | ${f(p.rps)} | **${f(ratio.rps, 2)}x** | ${f(b.median, 1)} vs ${f(p.median, 1)} | ${f(b.p99, 1)} vs ${f(p.p99, 1)} | ${f(b.cpu_ms, 2)} vs ${f(p.cpu_ms, 2)} |`,
    );
  }
} finally {
  fs.rmSync(fx, { recursive: true, force: true });
  if (peerDir !== sharedPeerDir) fs.rmSync(peerDir, { recursive: true, force: true });
}
