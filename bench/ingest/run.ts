// Ingest benchmark: a large generated vision archive (default 20,000 images), timed through
//  1. `unzip -t` (Info-ZIP reads and CRC-checks every entry: the floor for "touch every byte"),
//  2. Builder's safe extraction alone (yauzl, two passes over the central directory),
//  3. the whole datasets stage (extract + CSV checks + decode every image with sharp + split + table).
// Each measured step runs in its own process and reports its peak resident memory. Prints figures; asserts nothing.
//   node --import tsx bench/ingest/run.ts [--images 20000] [--side 64] [--big-mb 1024] [--repeat 1] [--keep]
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { ZipWriter } from "../../test/helpers/zips.js";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const IMAGES = arg("images", 20_000);
/** Each measurement is repeated and the fastest run kept: on a shared machine the minimum is the least noisy figure. */
const REPEAT = arg("repeat", 1);
const best = <T extends { seconds: number }>(f: () => T): T => {
  const runs = Array.from({ length: REPEAT }, f);
  return runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
};
const SIDE = arg("side", 64);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "bench-ingest-"));
const zipFile = path.join(work, "dataset.zip");

async function generate() {
  const t0 = Date.now();
  const w = new ZipWriter(zipFile);
  const lines = ["patient_id,image,label"];
  const base = Buffer.alloc(SIDE * SIDE);
  for (let i = 0; i < IMAGES; i++) {
    // A cheap textured grey image that differs per index, so PNG/deflate do real work.
    for (let p = 0; p < base.length; p++) base[p] = (p * 31 + i * 17 + ((p * i) % 251)) & 0xff;
    const png = await sharp(base, { raw: { width: SIDE, height: SIDE, channels: 1 } })
      .toColourspace("b-w")
      .png({ compressionLevel: 3 })
      .toBuffer();
    const name = `images/${String(Math.floor(i / 1000)).padStart(2, "0")}/img_${String(i).padStart(6, "0")}.png`;
    w.add(`study/${name}`, png);
    lines.push(`P${Math.floor(i / 4)},${name},${(i >> 2) % 3}`);
  }
  w.add("study/labels.csv", lines.join("\n") + "\n");
  w.finish();
  return (Date.now() - t0) / 1000;
}

function timeUnzip() {
  const t0 = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", "unzip", "-tqq", zipFile], { encoding: "utf8" });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const maxKb = Number(r.stderr.trim().split("\n").pop());
  return { mode: "unzip -t", seconds: Math.round(seconds * 100) / 100, max_rss_mb: Math.round(maxKb / 1024), rc: r.status };
}

/** Info-ZIP extracting for real (writes every file): the fair baseline for Builder's extraction. */
function timeUnzipExtract() {
  const dir = fs.mkdtempSync(path.join(work, "unzip-"));
  const t0 = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", "unzip", "-qq", "-o", zipFile, "-d", dir], { encoding: "utf8" });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    mode: "unzip (extract)",
    seconds: Math.round(seconds * 100) / 100,
    max_rss_mb: Math.round(Number(r.stderr.trim().split("\n").pop()) / 1024),
    rc: r.status,
  };
}

function child(mode: "extract" | "admzip" | "prepare", file = zipFile) {
  const dir = fs.mkdtempSync(path.join(work, `${mode}-`));
  const out = execFileSync(process.execPath, ["--import", "tsx", path.join(here, "child.ts"), mode, file, dir], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 1 << 20,
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return JSON.parse(out.trim().split("\n").pop()!);
}

if (IMAGES > 0) {
  const genSeconds = await generate();
  const size = fs.statSync(zipFile).size;
  console.log(
    `archive: ${IMAGES} PNG images ${SIDE}x${SIDE} + labels.csv, ${(size / 1e6).toFixed(1)} MB, generated in ${genSeconds.toFixed(1)} s (${work})`,
  );
  console.log(`machine: ${os.cpus().length} CPU, node ${process.version}; other work may share the CPU`);
  const results = [best(timeUnzip), best(timeUnzipExtract), best(() => child("extract")), best(() => child("prepare"))];
  for (const r of results) console.log(JSON.stringify(r));
  const [u, ux, e, p] = results;
  console.log(
    `extract: ${(e.seconds / u.seconds).toFixed(1)}x unzip -t, ${(e.seconds / ux.seconds).toFixed(1)}x unzip extracting; ` +
      `full checks: ${(p.seconds / u.seconds).toFixed(1)}x unzip -t, ${Math.round(IMAGES / p.seconds)} images/s`,
  );
}
// Memory against archive size: a large archive of incompressible data, extracted by yauzl and by adm-zip.
const BIG_MB = arg("big-mb", 1024);
if (BIG_MB > 0) {
  const big = path.join(work, "big.zip");
  const w = new ZipWriter(big);
  const block = Buffer.alloc(64 * 1024 * 1024);
  for (let i = 0; i * 64 < BIG_MB; i++) {
    for (let o = 0; o < block.length; o += 4) block.writeUInt32LE((Math.imul(o + 1, 2654435761) ^ i) >>> 0, o);
    w.add(`big/part_${i}.bin`, block, { method: "store" });
  }
  w.finish();
  console.log(`large archive: ${(fs.statSync(big).size / 1e6).toFixed(0)} MB of incompressible data in 64 MiB entries`);
  for (const mode of ["extract", "admzip"] as const) {
    try {
      console.log(JSON.stringify({ archive: "large", ...child(mode, big) }));
    } catch (err) {
      console.log(JSON.stringify({ archive: "large", mode, failed: (err as Error).message.split("\n")[0] }));
    }
  }
}
if (!process.argv.includes("--keep")) fs.rmSync(work, { recursive: true, force: true });
