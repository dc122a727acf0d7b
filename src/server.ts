import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "./config.js";
import { createApp } from "./http/app.js";
import { createPredictLane } from "./http/predict-lane.js";
import { ApiError, msg } from "./errors.js";
import { errorBody } from "./http/errors.js";
import { preferredLanguage } from "./http/error-language.js";
import { allRoutes } from "./http/routes/index.js";
import { createServices, type Services } from "./services.js";

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  server: http.Server;
  /** Stops accepting, lets in-flight requests finish, then closes services. */
  stop(): Promise<void>;
}

export async function startServer(config: Config, opts: { port?: number; host?: string } = {}): Promise<RunningServer> {
  const services = await createServices(config);
  const routes = allRoutes();
  const app = createApp(services, routes);
  // The two /predict routes' plain requests skip Express (predict-lane.ts says why); the rest is the app's.
  const predictLane = createPredictLane(services, routes);
  const server = http.createServer((req, res) => {
    if (!predictLane(req, res)) app(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.on("checkContinue", (req, res) => answerExpectContinue(config, app, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? config.PORT, opts.host ?? config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    services,
    server,
    stop: () =>
      (stopping ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await services.close();
      })()),
  };
}

/**
 * `Expect: 100-continue` (sent by ./builder upload and by curl for large bodies): refuse a body over the upload
 * limit before a byte of it is sent, so the client reads a clean 413 instead of a broken pipe half-way through;
 * anything else is told to continue and handled as usual.
 */
function answerExpectContinue(config: Config, app: http.RequestListener, req: http.IncomingMessage, res: http.ServerResponse) {
  const declared = Number(req.headers["content-length"]);
  // The same margin as the files route: multipart framing around a file at the limit.
  if (Number.isFinite(declared) && declared > config.MAX_UPLOAD_BYTES + 64 * 1024) {
    const error = new ApiError(413, "payload_too_large", msg("dataset.upload_too_large", { max: config.MAX_UPLOAD_BYTES }));
    res.writeHead(413, { "content-type": "application/json; charset=utf-8", connection: "close", "x-request-id": randomUUID() });
    res.end(JSON.stringify(errorBody(error, preferredLanguage(req.headers["accept-language"]))));
    return;
  }
  res.writeContinue();
  app(req, res);
}
