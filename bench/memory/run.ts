/**
 * Server memory benchmark: resident memory (RSS) of the process that runs Builder's server, idle, after each kind
 * of request, and during and after a 60 s mixed load of all of them, hostile ones included. Load comes from a
 * separate process (client.ts), so its buffers are not counted. Prints figures; asserts nothing.
 *   flock /tmp/builder-bench.lock nice node --import tsx bench/memory/run.ts [--seconds 60] [--concurrency 8]
 * Models: the serving benchmark's (bench/serve: a 224x224 CNN and the pipeline's CamNet with CAM outputs, a 320x256
 * letterbox detector, the tabular model). Dataset: BCCD as published (../shared/datasets/bccd) when present, else
 * a generated 200-image vision zip.
 */
import { execFileSync, fork } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import sharp from "sharp";
import { makeZip, visionDataset } from "../../test/helpers/zips.js";
import { ROOT, startBenchServer, TABULAR_ROW } from "../serve/bench-server.js";
import type { BenchRequest } from "./client.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg("seconds", 60);
const CONCURRENCY = arg("concurrency", 8);
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** A PNG whose header claims 40000 x 40000 pixels (a decompression bomb for a decoder that trusts it). */
async function pixelBomb(): Promise<Buffer> {
  const png = await sharp({ create: { width: 1, height: 1, channels: 3, background: "#000" } })
    .png()
    .toBuffer();
  const ihdr = png.subarray(12, 12 + 4 + 13); // type + data
  ihdr.writeUInt32BE(40_000, 4);
  ihdr.writeUInt32BE(40_000, 8);
  png.writeUInt32BE(zlib.crc32(ihdr), 12 + 4 + 13);
  return png;
}

/** Files built in a Python child process, so the 512 MB of zeros never pass through this process's memory. */
function buildZips(dir: string): { dataset: string; bomb: string; datasetKind: string } {
  const bomb = path.join(dir, "bomb.zip");
  execFileSync("python3", [
    "-c",
    `
import zipfile
with zipfile.ZipFile(${JSON.stringify(bomb)}, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("labels.csv", "patient_id,image,label\\n")
    with z.open("zeros.bin", "w", force_zip64=True) as f:
        for _ in range(512): f.write(bytes(1 << 20))
`,
  ]);
  const dataset = path.join(dir, "dataset.zip");
  const bccd = path.join(ROOT, "../shared/datasets/bccd");
  if (fs.existsSync(path.join(bccd, "Annotations"))) {
    execFileSync("python3", [
      "-c",
      `
import sys; sys.path.insert(0, ${JSON.stringify(path.join(ROOT, "bench/detection-bccd"))})
import bccd
bccd.write_user_zip(${JSON.stringify(bccd)}, bccd.image_ids(${JSON.stringify(bccd)}, "trainval"), ${JSON.stringify(dataset)})
`,
    ]);
    return { dataset, bomb, datasetKind: "bccd" };
  }
  return { dataset, bomb, datasetKind: "generated" };
}

async function main() {
  // The server's environment as ./builder sets it (glibc malloc arenas, see the launcher); it must be set before
  // the process starts, so the benchmark starts itself again with it. MALLOC_ARENA_MAX=0 measures glibc's default.
  if (process.env.MALLOC_ARENA_MAX === undefined) {
    const child = fork(process.argv[1], process.argv.slice(2), {
      env: { ...process.env, MALLOC_ARENA_MAX: "2" },
      execArgv: process.execArgv,
      stdio: "inherit",
    });
    child.on("exit", (code) => process.exit(code ?? 1));
    return;
  }
  console.log(`MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX}${process.env.MALLOC_ARENA_MAX === "0" ? " (glibc's default)" : ""}`);
  const ids = { vision: 1, detection: 2, tabular: 3, vision_resnet: 4 };
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "builder-bench-memory-"));
  const files = buildZips(work);
  if (files.datasetKind === "generated") fs.writeFileSync(files.dataset, makeZip(await visionDataset({ patients: 100 })));
  const bench = await startBenchServer(ids, { publish: false });
  const { key, user, photo } = bench;
  const url = `http://127.0.0.1:${bench.running.port}`;
  const client = fork(path.join(ROOT, "bench/memory/client.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });

  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 100);
  const auth = { authorization: `Bearer ${key}` };
  const json = (name: string, p: string, body: unknown, method = "POST"): BenchRequest => ({
    name,
    method,
    path: p,
    headers: { ...auth, "content-type": "application/json" },
    body: Buffer.from(typeof body === "string" ? body : JSON.stringify(body)).toString("base64"),
  });
  const predict = (name: string, id: number, message: unknown) => json(name, `/v1/experiments/${id}/predict`, { message });
  const zipPut = (name: string, file: string, at: string): BenchRequest => ({
    name,
    method: "PUT",
    path: `/v1/files/${user.id}/${at}`,
    headers: { ...auth, "content-type": "application/zip" },
    body: fs.readFileSync(file).toString("base64"),
  });
  const validate = (name: string, at: string, body: object) =>
    json(name, "/v1/datasets/validate", { zip_gcloud: `${user.id}/${at}`, ...body });
  const datasetRequest =
    files.datasetKind === "bccd"
      ? { task: "vision", type_of_experiment: "detection", label_cols: ["cell"], images_col: "image" }
      : { task: "vision", label_cols: ["label"], images_col: "image" };
  const bomb = await pixelBomb();

  const kinds: Array<[string, BenchRequest[], number]> = [
    ["GET /v1/me", [{ name: "me", method: "GET", path: "/v1/me", headers: auth }], 1000],
    ["predict tabular (loads that model)", [predict("tabular", ids.tabular, TABULAR_ROW)], 1000],
    ["predict vision (224² CNN, loads it; 512-px maps)", [predict("vision", ids.vision, photo)], 200],
    ["predict vision (CamNet, loads it)", [predict("vision_resnet", ids.vision_resnet, photo)], 200],
    ["predict detection (loads it)", [predict("detection", ids.detection, photo)], 200],
    [`upload ${mb(fs.statSync(files.dataset).size)} MB zip (${files.datasetKind})`, [zipPut("upload", files.dataset, "mem/data.zip")], 10],
    ["validate that zip", [validate("validate", "mem/data.zip", datasetRequest)], 5],
    [
      "hostile: bad JSON, 2 MB JSON, NUL, pixel bomb, bad link",
      [
        json("bad-json", "/v1/experiments", "{not json"),
        json("big-json", "/v1/experiments", { pad: "x".repeat(2 * 1024 * 1024) }),
        predict("nul", ids.tabular, "a\u0000b"),
        predict("pixel-bomb", ids.vision, `data:image/png;base64,${bomb.toString("base64")}`),
        predict("private-link", ids.vision, "http://10.0.0.1/x.png"),
      ],
      500,
    ],
    [
      "hostile: 512 MB zip bomb, upload + validate",
      [
        zipPut("bomb-upload", files.bomb, "mem/bomb.zip"),
        validate("bomb-validate", "mem/bomb.zip", { task: "vision", label_cols: ["label"], images_col: "image" }),
      ],
      4,
    ],
  ];

  const send = (requests: BenchRequest[], job: { count?: number; seconds?: number }, concurrency = 4) =>
    new Promise<{ sent: number; statuses: Record<string, Record<number, number>> }>((resolve) => {
      client.once("message", (m: { sent: number; statuses: Record<string, Record<number, number>> }) => resolve(m));
      client.send({ url, requests, concurrency, ...job });
    });
  const settle = () => new Promise((r) => setTimeout(r, 2000));

  await settle();
  const rows: string[] = [];
  const line = (what: string, statuses?: Record<string, Record<number, number>>) => {
    const now = mb(process.memoryUsage.rss());
    const s = statuses
      ? Object.entries(statuses)
          .map(
            ([n, c]) =>
              `${n} ${Object.entries(c)
                .map(([k, v]) => `${k}x${v}`)
                .join("/")}`,
          )
          .join(", ")
      : "";
    rows.push(`| ${what} | ${now} | ${mb(peak)} | ${s} |`);
    console.log(rows.at(-1));
  };
  console.log("| after | RSS settled, MB | peak so far, MB | answers (status x count) |\n|---|---|---|---|");
  line("just started, no model published (PGlite's start-up garbage not yet collected)");
  await bench.publish(false); // loaded lazily by the first request for each
  for (const [what, requests, count] of kinds) {
    const r = await send(requests, { count }, count < 5 ? 1 : 4);
    await settle();
    line(what, r.statuses);
  }
  const mix = kinds.flatMap(([, requests]) => requests).filter((r) => !r.name.startsWith("bomb-upload"));
  // Cheap requests repeated so the mix is mostly predictions, with uploads, validations and bombs among them.
  const weighted = [
    ...mix,
    ...Array(6)
      .fill(mix.filter((r) => ["me", "tabular", "vision", "vision_resnet", "detection"].includes(r.name)))
      .flat(),
  ];
  const samples: number[] = [];
  const every5 = setInterval(() => samples.push(mb(process.memoryUsage.rss())), 5000);
  const r = await send(weighted, { seconds: SECONDS }, CONCURRENCY);
  clearInterval(every5);
  await settle();
  line(`${SECONDS} s mixed load, concurrency ${CONCURRENCY} (${r.sent} requests)`, r.statuses);
  console.log(`RSS every 5 s during the mixed load (MB): ${samples.join(", ")}`);
  await new Promise((res) => setTimeout(res, 10_000));
  line("10 s after the load");
  const h = (await (await fetch(`${url}/healthz`)).json()) as object;
  console.log(`healthz after: ${JSON.stringify(h)}; model cache: ${JSON.stringify(bench.services.serving.cache.stats().models)} models`);
  clearInterval(sampler);
  client.send({ type: "exit" });
  await bench.close();
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

void main();
