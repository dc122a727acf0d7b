/**
 * What Express itself costs a tiny /predict request on this machine: the same fixed 117-byte tabular answer served
 * by servers that differ in one layer each, driven by http-load.ts (its own process) at one concurrency.
 *
 *   flock /tmp/builder-bench.lock npx tsx bench/serve/express-overhead.ts [--concurrency 8] [--seconds 4] [--rounds 2]
 *
 * Variants: raw (node:http, body read and JSON.parse by hand); raw+bodyparser (express.json() called directly,
 * no app); raw+prototypes (also Express's req/res prototypes set, as app.handle does per request); express-use
 * (an Express app with one middleware); express-route (express.json + app.post route, the shape Builder's routes
 * have). Prints req/s and median latency per variant and round. Builder's own /predict adds its middleware and
 * services on top (bench/serve/vs-peer.ts measures that). Asserts nothing.
 */
import http from "node:http";
import path from "node:path";
import { fork } from "node:child_process";
import express from "express";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : dflt);
const VARIANTS = ["raw", "raw+bodyparser", "raw+prototypes", "express-use", "express-route"] as const;
const ANSWER = Buffer.from(
  '{"prediccion":[0,1],"score":[0.03816601634025574,0.9618339538574219],"classes":{"0":"no","1":"yes"},"error":0}',
);

function handlerFor(variant: string): http.RequestListener {
  const app = express();
  app.disable("x-powered-by");
  const json = express.json({ limit: 1_000_000 });
  const send = (res: http.ServerResponse) => {
    res.statusCode = 201;
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.setHeader("content-length", String(ANSWER.length));
    res.end(ANSWER);
  };
  const byHand: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      JSON.parse(Buffer.concat(chunks).toString("utf8"));
      send(res);
    });
  };
  const viaBodyParser = (req: http.IncomingMessage, res: http.ServerResponse) =>
    json(req as express.Request, res as express.Response, () => send(res));
  switch (variant) {
    case "raw":
      return byHand;
    case "raw+bodyparser":
      return viaBodyParser;
    case "raw+prototypes":
      return (req, res) => {
        Object.setPrototypeOf(req, app.request);
        Object.setPrototypeOf(res, app.response);
        viaBodyParser(req, res);
      };
    case "express-use":
      app.use(byHand);
      return app;
    default:
      app.use(json);
      app.post("/v1/experiments/:experiment_id/predict", (_req, res) => send(res));
      return app;
  }
}

if (args[0] === "--serve") {
  const server = http
    .createServer(handlerFor(args[1]))
    .listen(0, "127.0.0.1", () => process.send!({ port: (server.address() as { port: number }).port }));
} else {
  const concurrency = Number(opt("concurrency", "8"));
  const seconds = Number(opt("seconds", "4"));
  const rounds = Number(opt("rounds", "2"));
  const self = new URL(import.meta.url).pathname;
  const client = fork(path.join(path.dirname(self), "http-load.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const load = (url: string) =>
    new Promise<{ latencies: number[]; errors: number; seconds: number }>((resolve) => {
      const onMessage = (m: { type: string; latencies: number[]; errors: number; seconds: number }) => {
        if (m.type !== "done") return;
        client.off("message", onMessage);
        resolve(m);
      };
      client.on("message", onMessage);
      client.send({
        url,
        path: "/v1/experiments/1/predict",
        key: "unused",
        body: JSON.stringify({ message: [63, 1, 27.5, 2] }),
        concurrency,
        seconds,
      });
    });
  console.log(`# Express overhead, c=${concurrency}, ${rounds} rounds x ${seconds} s (variants alternated)`);
  for (let r = 1; r <= rounds; r++) {
    for (const v of VARIANTS) {
      const server = fork(self, ["--serve", v], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
      const port = await new Promise<number>((resolve) => server.once("message", (m: { port: number }) => resolve(m.port)));
      const res = await load(`http://127.0.0.1:${port}`);
      server.kill();
      const sorted = [...res.latencies].sort((a, b) => a - b);
      console.log(
        `round ${r}  ${v.padEnd(16)} ${(res.latencies.length / res.seconds).toFixed(0).padStart(6)} req/s  median ${sorted[sorted.length >> 1].toFixed(3)} ms  errors ${res.errors}`,
      );
    }
  }
  client.send({ type: "exit" });
}
