/**
 * Batch scoring against a client's loop of /predict calls, on the same server in one run, alternated
 * (loop, batch, loop, batch, ...), medians over rounds: rows/s for the 4-column tabular benchmark model and images/s
 * for the 224x224 CNN with Grad-CAM (bench/serve's models). The loop is the best a simple script does: one
 * keep-alive connection, one request at a time, as in the issue ("a loop over /predict"). The image batch is also
 * timed with Grad-CAM overlays (?overlays=true, overlays.zip downloaded too): what the overlays cost.
 *
 *   npx tsx bench/batch/batch-vs-loop.ts [--rows 2000] [--images 100] [--rounds 3]
 */
import { startBenchServer } from "../serve/bench-server.js";
import { makeZip } from "../../test/helpers/zips.js";
import fs from "node:fs";
import path from "node:path";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROWS = arg("rows", 2000);
const IMAGES = arg("images", 100);
const ROUNDS = arg("rounds", 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const bench = await startBenchServer({ tabular: 1, vision: 2 });
const url = bench.running.url;
const auth = { authorization: `Bearer ${bench.key}` };

const SEXES = ["F", "M"];
const SITES = ["north", "south", "east"];
const rows = Array.from({ length: ROWS }, (_, i) => ({
  age: 20 + ((i * 7) % 70),
  sex: i % 2,
  bmi: 18 + ((i * 13) % 300) / 10,
  site: i % 3,
}));
const csv =
  ["patient_id,age,sex,bmi,site", ...rows.map((r, i) => `P${i},${r.age},${SEXES[r.sex]},${r.bmi},${SITES[r.site]}`)].join("\n") + "\n";
const photo = fs.readFileSync(path.join(bench.fxDir, "photo.jpg"));
const zip = makeZip(Object.fromEntries(Array.from({ length: IMAGES }, (_, i) => [`scans/img${i}.jpg`, photo])));

async function loop(experimentId: number, messages: unknown[]): Promise<number> {
  const t0 = performance.now();
  for (const message of messages) {
    const res = await fetch(`${url}/v1/experiments/${experimentId}/predict`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    if (res.status !== 201) throw new Error(`predict ${res.status}`);
    await res.arrayBuffer();
  }
  return (performance.now() - t0) / 1000;
}

async function batch(experimentId: number, contentType: string, body: Buffer | string, overlays = false): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/models/${experimentId}/batch${overlays ? "?overlays=true" : ""}`, {
    method: "POST",
    headers: { ...auth, "content-type": contentType },
    body,
  });
  const { batch_id } = (await res.json()) as { batch_id: string };
  for (;;) {
    const b = (await (await fetch(`${url}/v1/batches/${batch_id}`, { headers: auth })).json()) as {
      status: string;
      failure_reason: string | null;
    };
    if (b.status === "failed") throw new Error(`batch failed: ${b.failure_reason}`);
    if (b.status === "done") break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await (await fetch(`${url}/v1/batches/${batch_id}/results.csv`, { headers: auth })).arrayBuffer();
  if (overlays) await (await fetch(`${url}/v1/batches/${batch_id}/overlays.zip`, { headers: auth })).arrayBuffer();
  return (performance.now() - t0) / 1000;
}

const messages = rows.map((r) => [r.age, r.sex, r.bmi, r.site]);
const dataUri = `data:image/jpeg;base64,${photo.toString("base64")}`;
const images = Array.from({ length: IMAGES }, () => dataUri);
await loop(1, messages.slice(0, 50));
await loop(2, images.slice(0, 5)); // warm-up
const t = {
  rowsLoop: [] as number[],
  rowsBatch: [] as number[],
  imgLoop: [] as number[],
  imgBatch: [] as number[],
  imgOverlays: [] as number[],
};
for (let round = 0; round < ROUNDS; round++) {
  t.rowsLoop.push(ROWS / (await loop(1, messages)));
  t.rowsBatch.push(ROWS / (await batch(1, "text/csv", csv)));
  t.imgLoop.push(IMAGES / (await loop(2, images)));
  t.imgBatch.push(IMAGES / (await batch(2, "application/zip", zip)));
  t.imgOverlays.push(IMAGES / (await batch(2, "application/zip", zip, true)));
}
const fmt = (xs: number[]) => `${median(xs).toFixed(1)}/s (rounds: ${xs.map((x) => x.toFixed(1)).join(", ")})`;
console.log(
  `${new Date().toISOString()} · ${ROWS} rows, ${IMAGES} images (224x224 CNN + Grad-CAM, a 512x384 JPEG), ${ROUNDS} rounds alternated`,
);
console.log(`rows   loop of /predict: ${fmt(t.rowsLoop)}`);
console.log(`rows   batch:            ${fmt(t.rowsBatch)}   ratio ${(median(t.rowsBatch) / median(t.rowsLoop)).toFixed(2)}x`);
console.log(`images loop of /predict: ${fmt(t.imgLoop)}`);
console.log(`images batch:            ${fmt(t.imgBatch)}   ratio ${(median(t.imgBatch) / median(t.imgLoop)).toFixed(2)}x`);
console.log(
  `images batch, overlays: ${fmt(t.imgOverlays)}   ${(median(t.imgBatch) / median(t.imgOverlays)).toFixed(2)}x the time of the batch without them`,
);
await bench.close();
process.exit(0);
