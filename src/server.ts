import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "./config.js";
import { createApp } from "./http/app.js";
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
  const app = createApp(services, allRoutes());
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
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
