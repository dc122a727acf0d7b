/**
 * Where an image prediction's time goes on a serving worker thread, stage by stage: the steps of
 * src/serving/model-thread.ts (decode, resize + normalise into reused buffers, session.run, the answer with
 * its maps, its JSON into a reused buffer), called in one loop on the bench photo, one request at a time.
 *
 *   nice npx tsx bench/serve/worker-stages.ts [--kinds vision_resnet,vision,detection] [--n 300] [--decoder auto|sharp] [--intra N]
 *
 * --decoder: as JPEG_DECODER (auto: libjpeg-turbo on this thread when the host has it, as the worker does);
 * --intra: as ORT_INTRA_OP_THREADS (0: ONNX Runtime's default, one per core).
 *
 * Prints per stage the median, mean and p99 wall time per call (and the whole call's median and p99), and the process CPU per request (all
 * threads: sharp decodes on libuv's, ONNX Runtime runs on its own). On a busy machine read the CPU figures.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import * as ort from "onnxruntime-node";
import { imageAnswer, MapMemory } from "../../src/serving/image-answer.js";
import { encodeJson, JsonOut } from "../../src/serving/json-encode.js";
import { checkManifest, classNames } from "../../src/serving/manifest.js";
import { decodeImage, normalise, resizeToSpec } from "../../src/serving/preprocess.js";
import { decodeJpegTurbo, openTurboJpeg, PixelMemory, turboJpegLoadError } from "../../src/serving/jpeg-turbo.js";
import { ROOT } from "./bench-server.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const KINDS = opt("kinds", "vision_resnet,vision,detection").split(",");
const N = Number(opt("n", "300"));
const WARMUP = 30;
const turbo = opt("decoder", "auto") === "auto" ? openTurboJpeg() : null;
const pixelMemory = new PixelMemory();

const fx = fs.mkdtempSync(path.join(os.tmpdir(), "builder-worker-stages-"));
execFileSync(path.join(ROOT, "pipelines/.venv/bin/python"), [path.join(ROOT, "test/fixtures/serving/make_fixtures.py"), "--bench", fx]);
const photo = fs.readFileSync(path.join(fx, "photo.jpg"));
console.log(
  `# worker stages  ${new Date().toISOString()}  node ${process.version}  load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}  ${N} calls  decoder ${turbo ? `libjpeg-turbo (${turbo.library})` : `sharp ${turboJpegLoadError()}`}`,
);

for (const kind of KINDS) {
  const manifest = checkManifest(JSON.parse(fs.readFileSync(path.join(fx, kind, "manifest.json"), "utf8")));
  const spec = manifest.input.image!;
  // The options of src/serving/model-threads.ts (ORT_INTRA_OP_THREADS=0: ORT's default thread count).
  const session = await ort.InferenceSession.create(path.join(fx, kind, "model.onnx"), {
    graphOptimizationLevel: "all",
    executionMode: "sequential",
    interOpNumThreads: 1,
    executionProviders: ["cpu"],
    ...(Number(opt("intra", "0")) > 0 ? { intraOpNumThreads: Number(opt("intra", "0")) } : {}),
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  });
  const tensor = new Float32Array(spec.channels * spec.height * spec.width);
  const letterboxed = new Uint8Array(tensor.length);
  const mapMemory = new MapMemory();
  const slot = new SharedArrayBuffer(2 * 1024 * 1024);
  const classes = classNames(manifest);
  const stages = ["decode", "resize + normalise", "session.run", "answer + maps", "JSON"] as const;
  const times: Record<string, number[]> = Object.fromEntries(stages.map((s) => [s, []]));
  let cpu = process.cpuUsage();
  for (let i = 0; i < WARMUP + N; i++) {
    if (i === WARMUP) cpu = process.cpuUsage();
    const t = [performance.now()];
    const img = (turbo && decodeJpegTurbo(photo, 1e8, pixelMemory)) || (await decodeImage(new Uint8Array(photo), 1e8));
    t.push(performance.now());
    const { pixels, scaleX, scaleY } = resizeToSpec(img, spec, { into: letterboxed });
    normalise(pixels, spec, tensor);
    t.push(performance.now());
    const out = await session.run({
      [manifest.input.name]: new ort.Tensor("float32", tensor, [1, spec.channels, spec.height, spec.width]),
    });
    t.push(performance.now());
    const answer = imageAnswer(
      manifest,
      classes,
      out,
      { tensor, origWidth: img.width, origHeight: img.height, scaleX, scaleY },
      { gradcamMaxSide: 512, mapMemory },
    );
    t.push(performance.now());
    encodeJson(answer, new JsonOut(slot));
    t.push(performance.now());
    if (i >= WARMUP) stages.forEach((s, k) => times[s].push(t[k + 1] - t[k]));
  }
  const used = process.cpuUsage(cpu);
  console.log(
    `## ${kind} (${spec.width}x${spec.height} ${spec.resize})   CPU ${((used.user + used.system) / 1000 / N).toFixed(2)} ms/request, all threads`,
  );
  for (const s of stages) {
    const v = [...times[s]].sort((a, b) => a - b);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const p99 = v[Math.min(v.length - 1, Math.floor(0.99 * v.length))];
    console.log(
      `  ${s.padEnd(20)} median ${v[v.length >> 1].toFixed(3).padStart(7)} ms   mean ${mean.toFixed(3).padStart(7)} ms   p99 ${p99.toFixed(3).padStart(7)} ms`,
    );
  }
  // The whole call's tail: which stage it comes from shows in the p99 column above.
  const total = times[stages[0]].map((_, i) => stages.reduce((t, s) => t + times[s][i], 0)).sort((a, b) => a - b);
  console.log(
    `  ${"whole call".padEnd(20)} median ${total[total.length >> 1].toFixed(3).padStart(7)} ms   p99 ${total[Math.min(total.length - 1, Math.floor(0.99 * total.length))].toFixed(3).padStart(7)} ms`,
  );
  await session.release();
}
fs.rmSync(fx, { recursive: true, force: true });
