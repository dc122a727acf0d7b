/**
 * Security issue 48, findings 1, 2 and 9: what a DICOM bomb costs a Builder server, before and after the fix, side by
 * side. Prints figures, asserts nothing.
 *
 *   flock /tmp/builder-heavy.lock npx tsx bench/security/dicom-bombs.ts --before DIR [--after DIR] [--rounds 3]
 *     [--idle 30] [--scenarios j2k-predict,...]
 *
 * DIR is a checkout's root (e.g. `git archive <commit> | tar -x -C DIR` with node_modules and pipelines/.venv linked
 * in); --after defaults to this checkout. Per scenario, round and side a fresh server runs in its own process
 * (dicom-bombs-server.ts, the serving fixture's image classifier as experiment 1), is warmed (a PNG, a DICOM and a
 * tiny dataset check), left 3 s, then attacked: the scenario's requests go out together while /healthz and a small
 * PNG /predict are asked again and again, one at a time, until the last answer is in. Figures: the attack's
 * statuses and time; the slowest /healthz and small /predict meanwhile (the event loop, the model threads); RSS
 * before, its peak (sampled every 10 ms), right after, and after --idle seconds of nothing (what is never returned).
 * Sides alternate within each round; medians over rounds.
 *
 * Scenarios (test/helpers/dicom-bombs.ts builds the files):
 *   j2k-predict      3 x /predict, data: URI: a 1 KB JPEG 2000 DICOM, 64x64 header, codestream stating 16384x16384
 *   j2k-dicomweb     the same file through a DICOMweb WADO-RS link (a local server, multipart/related)
 *   j2k-dataset      one dataset check of a zip holding two of those and one whose header states 16384x16384 too
 *   deflate-predict  3 x /predict, data: URI: a 15 MB deflated DICOM that inflates to ~15 GB of zeros
 *   deflate-dataset  one dataset check of a zip holding one such file
 *   large-j2k        3 x /predict of a legitimate 6000x6000 (36 MP) JPEG 2000 DICOM: the decode is allowed; is the
 *                    decoder's memory given back afterwards?
 */
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import sharp from "sharp";
import { servingFixtures } from "../../test/fixtures/serving/fixtures.js";
import { deflateBomb, j2kDicom } from "../../test/helpers/dicom-bombs.js";
import { SYNTAX, writeDicom } from "../../test/helpers/dicom-writer.js";
import { makeZip } from "../../test/helpers/zips.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const args = process.argv.slice(2);
const opt = (name: string, dflt?: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const before = opt("before");
if (!before) throw new Error("--before DIR (a checkout of the commit to compare with) is required");
const after = opt("after", ROOT)!;
const rounds = Number(opt("rounds", "3"));
const idleS = Number(opt("idle", "30"));
const only = opt("scenarios")?.split(",");
const MB = 2 ** 20;

interface Side {
  name: string;
  child: ChildProcess;
  url: string;
  key: string;
  userId: string;
}

async function startSide(name: string, root: string, modelDir: string): Promise<Side> {
  const child = fork(path.join(import.meta.dirname, "dicom-bombs-server.ts"), [root, modelDir], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ url: string; key: string; userId: string }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { url: string; key: string; userId: string }));
    child.once("exit", (code) => reject(new Error(`${name} server exited (${code})`)));
  });
  return { name, child, ...ready };
}

const ask = <T>(side: Side, m: string) =>
  new Promise<T>((resolve) => {
    side.child.once("message", (r) => resolve(r as T));
    side.child.send(m);
  });
const stop = (side: Side) => new Promise((resolve) => side.child.once("exit", resolve).send("stop"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

async function predict(side: Side, message: string): Promise<number> {
  const res = await fetch(`${side.url}/predict`, {
    method: "POST",
    headers: { authorization: `Bearer ${side.key}`, "content-type": "application/json", "x-experiment-id": "1" },
    body: JSON.stringify({ message }),
  }).catch(() => undefined);
  await res?.arrayBuffer();
  return res?.status ?? -1;
}

let zips = 0;
/** PUT the zip, POST /v1/datasets/validate; the status and the image_unreadable messages' count. */
async function validate(side: Side, files: Record<string, Buffer>): Promise<number> {
  const names = Object.keys(files);
  const entries: Record<string, Buffer | string> = {
    "labels.csv": ["patient,image,label", ...names.map((f, i) => `p${i},scans/${f},${i % 2}`)].join("\n") + "\n",
  };
  for (const [name, bytes] of Object.entries(files)) entries[`scans/${name}`] = bytes;
  const zip_gcloud = `${side.userId}/bench${++zips}/data.zip`;
  const auth = { authorization: `Bearer ${side.key}` };
  // Stored, not deflated: a repetitive bomb deflated again would trip the zip's own compression-ratio guard first.
  const stored = Object.fromEntries(Object.keys(files).map((n) => [`scans/${n}`, { method: "store" as const }]));
  const put = await fetch(`${side.url}/v1/files/${zip_gcloud}`, { method: "PUT", headers: auth, body: makeZip(entries, stored) });
  await put.arrayBuffer();
  const res = await fetch(`${side.url}/v1/datasets/validate`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ zip_gcloud, task: "vision", label_cols: ["label"], images_col: "image" }),
  });
  const body = (await res.json()) as { errors?: Array<{ code: string }> };
  return res.status === 200 ? (body.errors ?? []).filter((e) => e.code === "image_unreadable").length : -res.status;
}

// The files, built once.
const dataUri = (b: Buffer) => `data:application/dicom;base64,${b.toString("base64")}`;
const smallPng = `data:image/png;base64,${(
  await sharp({ create: { width: 64, height: 64, channels: 3, background: "#808080" } })
    .png()
    .toBuffer()
).toString("base64")}`;
const smallDicom = writeDicom({
  syntax: SYNTAX.explicitLittle,
  rows: 64,
  columns: 64,
  pixels: Uint8Array.from({ length: 4096 }, (_, i) => i % 256),
});
const j2kLies = j2kDicom(16384, 64);
const j2kHuge = j2kDicom(16384, 16384);
const deflate = deflateBomb(15_000_000);
const largeJ2k = (() => {
  const py = `import numpy as np, openjpeg, sys
y, x = np.mgrid[0:6000, 0:6000]
sys.stdout.buffer.write(bytes(openjpeg.encode(((x + y) % 256).astype(np.uint8))))`;
  const codestream = execFileSync(path.join(ROOT, "pipelines/.venv/bin/python"), ["-c", py], { maxBuffer: 256 * MB });
  return writeDicom({ syntax: SYNTAX.j2k, rows: 6000, columns: 6000, pixels: [codestream] });
})();

// The DICOMweb server: one instance, the lying JPEG 2000 file.
const BOUNDARY = "BenchBoundary48";
const pacs = http.createServer((_req, res) => {
  res.writeHead(200, { "content-type": `multipart/related; type="application/dicom"; boundary=${BOUNDARY}` });
  res.end(
    Buffer.concat([
      Buffer.from(`--${BOUNDARY}\r\nContent-Type: application/dicom\r\n\r\n`),
      j2kLies,
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]),
  );
});
await new Promise<void>((r) => pacs.listen(0, "127.0.0.1", r));
const pacsUrl = `http://127.0.0.1:${(pacs.address() as AddressInfo).port}/dicomweb/studies/1.2/series/3.4/instances/5.6`;

const small = (i: number) =>
  writeDicom({ syntax: SYNTAX.explicitLittle, rows: 8, columns: 8, pixels: Uint8Array.from({ length: 64 }, (_, k) => (k * i) % 256) });
const times = (n: number, f: () => Promise<number>) => Array.from({ length: n }, f);
interface Scenario {
  name: string;
  attack: (s: Side) => Promise<number>[];
  sizes: string;
}
const ALL: Scenario[] = [
  { name: "j2k-predict", sizes: `3 x ${j2kLies.length} B`, attack: (s) => times(3, () => predict(s, dataUri(j2kLies))) },
  { name: "j2k-dicomweb", sizes: `3 x ${j2kLies.length} B`, attack: (s) => times(3, () => predict(s, pacsUrl)) },
  {
    name: "j2k-dataset",
    sizes: `zip of 3 x ~1 KB`,
    attack: (s) => [
      validate(s, { "a.dcm": j2kLies, "b.dcm": j2kLies, "c.dcm": j2kHuge, "d.dcm": small(1), "e.dcm": small(2), "f.dcm": small(3) }),
    ],
  },
  {
    name: "deflate-predict",
    sizes: `3 x ${(deflate.length / MB).toFixed(1)} MB`,
    attack: (s) => times(3, () => predict(s, dataUri(deflate))),
  },
  {
    name: "deflate-dataset",
    sizes: `zip of ${(deflate.length / MB).toFixed(1)} MB`,
    attack: (s) => [validate(s, { "a.dcm": deflate, ...Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`${i}.dcm`, small(i)])) })],
  },
  { name: "large-j2k", sizes: `3 x ${(largeJ2k.length / MB).toFixed(1)} MB`, attack: (s) => times(3, () => predict(s, dataUri(largeJ2k))) },
];
const scenarios = ALL.filter((s) => !only || only.includes(s.name));

async function round(side: Side, scenario: Scenario) {
  // Warm: a PNG and a DICOM through the model's threads (codecs loaded), a DICOM through the dataset check's thread.
  await predict(side, smallPng);
  await predict(side, dataUri(smallDicom));
  await validate(side, { "d.dcm": small(1), "e.dcm": small(2), "f.dcm": small(3), "g.dcm": small(4) });
  await sleep(3000);
  const { rss: rss0 } = await ask<{ rss: number }>(side, "rss");
  await ask(side, "peak");
  let done = false;
  const attack = timed(() => Promise.all(scenario.attack(side))).finally(() => (done = true));
  let healthz = 0;
  let smallPredict = 0;
  while (!done) {
    healthz = Math.max(healthz, (await timed(() => fetch(`${side.url}/healthz`).then((r) => r.arrayBuffer()))).ms);
    smallPredict = Math.max(smallPredict, (await timed(() => predict(side, smallPng))).ms);
  }
  const { ms, value: statuses } = await attack;
  const { peak } = await ask<{ peak: number }>(side, "peak");
  const { rss: rss1 } = await ask<{ rss: number }>(side, "rss");
  await sleep(idleS * 1000);
  const { rss: rss2 } = await ask<{ rss: number }>(side, "rss");
  return { statuses: [...new Set(statuses)].join("/"), ms, healthz, smallPredict, rss0, peak, rss1, rss2 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const modelDir = servingFixtures().modelDir("vision_binary");
console.log(`before=${before} after=${after} rounds=${rounds} idle=${idleS}s node=${process.version} cpus=${os.cpus().length}`);
console.log(
  "scenario         side    answer        attack ms  /healthz worst  small /predict worst   RSS before  peak  after  after idle (MB)",
);
for (const s of scenarios) {
  const results = new Map<string, Awaited<ReturnType<typeof round>>[]>([
    ["before", []],
    ["after", []],
  ]);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (["before", "after"] as const) : (["after", "before"] as const);
    for (const name of order) {
      const side = await startSide(name, name === "before" ? before : after, modelDir);
      try {
        results.get(name)!.push(await round(side, s));
      } finally {
        await stop(side);
      }
    }
  }
  for (const [name, rs] of results) {
    const m = (f: (x: (typeof rs)[number]) => number) => median(rs.map(f));
    console.log(
      `${s.name.padEnd(16)} ${name.padEnd(7)} ${rs
        .map((x) => x.statuses)
        .join(",")
        .padEnd(13)} ${m((x) => x.ms)
        .toFixed(0)
        .padStart(9)}` +
        `  ${m((x) => x.healthz)
          .toFixed(1)
          .padStart(14)}  ${m((x) => x.smallPredict)
          .toFixed(0)
          .padStart(20)}` +
        `   ${(m((x) => x.rss0) / MB).toFixed(0).padStart(10)}  ${(m((x) => x.peak) / MB).toFixed(0).padStart(4)}` +
        `  ${(m((x) => x.rss1) / MB).toFixed(0).padStart(5)}  ${(m((x) => x.rss2) / MB).toFixed(0).padStart(10)}`,
    );
  }
  console.log(`  (${s.sizes})`);
}
pacs.close();
