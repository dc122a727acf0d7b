/**
 * The load client's own share of a measured latency: a node:http server that does no work (it parses the 82 KB
 * request and answers a prebuilt JSON of 1 KB, 137 KB or 548 KB, the sizes of /predict's answers without and with
 * Grad-CAM maps) measured at c=1 by three clients, each in its own process:
 *   - undici, reading each answer with arrayBuffer() (what http-load.ts did until 2026-11-25);
 *   - raw-load.mjs (what http-load.ts and `vs-peer.ts --client raw` use now): nothing allocated per answer;
 *   - Python's http.client (no garbage collector pauses for large byte strings), as a reference;
 *   - the shared peer's own load.mjs (http chunks + Buffer.concat), when ../shared/peer-fastapi is there (or PEER_DIR).
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/client-floor.ts [--seconds 4]
 *
 * Whatever the server needs is the same for all three, so the differences are the clients'.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import readline from "node:readline";
import { execFile, fork, spawn } from "node:child_process";
import { Pool } from "undici";
import { closeAll, runLoad } from "./raw-load.mjs";

const args = process.argv.slice(2);
const SECONDS = Number(args.includes("--seconds") ? args[args.indexOf("--seconds") + 1] : "4");
const BODY = JSON.stringify({ message: `data:image/jpeg;base64,${"A".repeat(82 * 1024)}` });
const q = (lat: number[], p: number) => [...lat].sort((a, b) => a - b)[Math.floor(p * (lat.length - 1))];

async function undiciClient(url: string) {
  const pool = new Pool(url, { connections: 1 });
  const lat: number[] = [];
  const end = performance.now() + 500 + SECONDS * 1000;
  const timedFrom = performance.now() + 500;
  while (performance.now() < end) {
    const s = performance.now();
    const res = await pool.request({ method: "POST", path: "/p", headers: { "content-type": "application/json" }, body: BODY });
    await res.body.arrayBuffer();
    if (s >= timedFrom) lat.push(performance.now() - s);
  }
  await pool.close();
  return lat;
}

const PY = `
import http.client, json, sys, time
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1])); body = sys.stdin.buffer.read(); lat = []
t0 = time.perf_counter(); end = t0 + 0.5 + float(sys.argv[2])
while time.perf_counter() < end:
    s = time.perf_counter(); c.request("POST", "/p", body=body, headers={"content-type": "application/json"}); c.getresponse().read()
    if s >= t0 + 0.5: lat.append((time.perf_counter() - s) * 1000)
print(json.dumps(lat))`;

function pythonClient(port: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = execFile("python3", ["-c", PY, String(port), String(SECONDS)], { maxBuffer: 64 * 1024 * 1024 }, (err, out) =>
      err ? reject(err) : resolve(JSON.parse(out)),
    );
    child.stdin!.end(BODY);
  });
}

const PEER_LOAD = path.join(
  process.env.PEER_DIR ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../../shared/peer-fastapi"),
  "load.mjs",
);

/** The peer's load.mjs through its own stdin/stdout protocol: one job line, then "started" and the "done" line. */
async function peerLoadClient(url: string): Promise<number[]> {
  const child = spawn("node", [PEER_LOAD], { stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.write(`${JSON.stringify({ url, path: "/p", key: "-", body: BODY, concurrency: 1, seconds: SECONDS, warmup: 0.5 })}\n`);
  for await (const line of readline.createInterface({ input: child.stdout })) {
    const m = JSON.parse(line);
    if (m.type !== "done") continue;
    child.stdin.end(`${JSON.stringify({ exit: true })}\n`);
    return m.latencies;
  }
  throw new Error("load.mjs ended without an answer");
}

if (process.argv[2] === "--child") {
  // A client process: `--child undici|raw URL`; sends its latencies back over IPC.
  const [kind, url] = [process.argv[3], process.argv[4]];
  const lat =
    kind === "undici"
      ? await undiciClient(url)
      : (await runLoad({ url, path: "/p", key: "-", body: BODY, concurrency: 1, seconds: SECONDS, warmup: 0.5 })).latencies;
  closeAll();
  process.send!(lat, () => process.exit(0));
} else {
  console.log(`# client floor ${new Date().toISOString()}: a server doing no work, c=1, ${SECONDS} s per point, 82 KB requests`);
  for (const kb of [1, 137, 548]) {
    const answer = Buffer.from(JSON.stringify({ g: Array.from({ length: (kb * 1024) / 4 }, (_, i) => (i * 37) % 256) }));
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        JSON.parse(Buffer.concat(chunks).toString("utf8"));
        res.writeHead(201, { "content-type": "application/json", "content-length": answer.length }).end(answer);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    for (const kind of ["undici", "raw", "python", ...(fs.existsSync(PEER_LOAD) ? ["load.mjs"] : [])]) {
      const lat =
        kind === "python"
          ? await pythonClient(port)
          : kind === "load.mjs"
            ? await peerLoadClient(`http://127.0.0.1:${port}`)
            : await new Promise<number[]>((resolve) =>
                fork(new URL(import.meta.url).pathname, ["--child", kind, `http://127.0.0.1:${port}`], {
                  execArgv: ["--import", "tsx"],
                }).once("message", (m) => resolve(m as number[])),
              );
      const med = q(lat, 0.5),
        p99 = q(lat, 0.99);
      console.log(
        `answer ${String(answer.length).padStart(7)} B  ${kind.padEnd(8)}  n ${String(lat.length).padStart(6)}  median ${med.toFixed(3)} ms  p99 ${p99.toFixed(3)} ms  p99/median ${(p99 / med).toFixed(2)}`,
      );
    }
    server.close();
  }
  process.exit(0);
}
