/**
 * Where an HTTP /predict request's time goes at c=1, against the same prediction in-process, round by round:
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/http-split.ts [--kind detection] [--rounds 5] [--seconds 4]
 *
 * Each round runs the in-process loop (fetchImageBytes + predictImage, as run.ts) and then HTTP from the client
 * process (http-load.ts), and prints medians of: the client's latency; on the server, 'request' (headers parsed)
 * to the body's end, to the start of services.serving.predict (body parsed, authenticated, validated), the
 * prediction itself, and from its end to the response's 'finish' (answer handed to the socket). The profile
 * (profile.ts) shows CPU; this shows waits too. services.serving.predict is wrapped for the timing, nothing else.
 */
import { fetchImageBytes } from "../../src/net/image-fetch.js";
import { predictImage } from "../../src/serving/predict.js";
import { startBenchServer } from "./bench-server.js";
import { personalScope } from "../../src/workspaces/scope.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const KIND = opt("kind", "detection");
const ROUNDS = Number(opt("rounds", "5"));
const SECONDS = Number(opt("seconds", "4"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function main() {
  const b = await startBenchServer({ [KIND]: 1 });
  const model = await b.services.serving.model(await personalScope(b.services.db, b.user.id), 1);
  const ctx = { storagePrefix: b.user.id, bucket: b.services.bucket, guard: b.services.serving.guard, maxBytes: b.config.FETCH_MAX_BYTES };
  const popts = { maxPixels: b.config.FETCH_MAX_PIXELS, gradcamMaxSide: b.config.GRADCAM_MAX_SIDE };

  // At c=1 one request is in flight, so the stage marks of the current request are plain variables.
  const t = { request: 0, predictEnd: 0 };
  const stages = {
    bodyEnd: [] as number[],
    predictStart: [] as number[],
    predict: [] as number[],
    toFinish: [] as number[],
    server: [] as number[],
  };
  b.running.server.prependListener("request", (req, res) => {
    t.request = performance.now();
    req.on("end", () => stages.bodyEnd.push(performance.now() - t.request));
    res.on("finish", () => {
      stages.server.push(performance.now() - t.request);
      stages.toFinish.push(performance.now() - t.predictEnd);
    });
  });
  const predict = b.services.serving.predict.bind(b.services.serving);
  b.services.serving.predict = async (...a: Parameters<typeof predict>) => {
    const s = performance.now();
    stages.predictStart.push(s - t.request);
    try {
      return await predict(...a);
    } finally {
      t.predictEnd = performance.now();
      stages.predict.push(t.predictEnd - s);
    }
  };

  const body = JSON.stringify({ message: b.photo });
  console.log(`# http-split ${KIND}, c=1, ${ROUNDS} rounds x ${SECONDS} s, ${new Date().toISOString()}; medians in ms`);
  for (let r = 1; r <= ROUNDS; r++) {
    const inproc: number[] = [];
    const end = performance.now() + SECONDS * 1000;
    while (performance.now() < end) {
      const s = performance.now();
      (await predictImage(model, (await fetchImageBytes(b.photo, ctx)).bytes, popts)).release?.();
      inproc.push(performance.now() - s);
    }
    for (const list of Object.values(stages)) list.length = 0;
    const http = await new Promise<{ latencies: number[] }>((resolve) => {
      const on = (m: { type: string; latencies: number[] }) => {
        if (m.type !== "done") return;
        b.client.off("message", on);
        resolve(m);
      };
      b.client.on("message", on);
      b.client.send({ url: b.running.url, path: "/v1/experiments/1/predict", key: b.key, body, concurrency: 1, seconds: SECONDS });
    });
    const f = (xs: number[]) => median(xs).toFixed(3);
    const client = median(http.latencies);
    console.log(
      `round ${r}: in-process ${f(inproc)} | HTTP client ${client.toFixed(3)} (${(client / median(inproc)).toFixed(2)}x) = server ${f(stages.server)}` +
        ` [to body end ${f(stages.bodyEnd)}, to predict ${f(stages.predictStart)}, predict ${f(stages.predict)}, to finish ${f(stages.toFinish)}]`,
    );
  }
  await b.close();
}

// As run.ts: exit explicitly (tsx's loader port can keep the process alive after an image model ran).
main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
