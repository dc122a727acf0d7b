import http from "node:http";
import type { Services } from "../services.js";
import type { SlotPool } from "../jobs/gpu-slots.js";
import { metricsRefusal } from "../auth/metrics-access.js";

/**
 * The worker's own small HTTP endpoint (WORKER_PORT): /healthz for the container's HEALTHCHECK, /readyz with
 * the database check and the devices this worker sees, /metrics for Prometheus with the same METRICS_TOKEN rule as
 * the API's (src/auth/metrics-access.ts). /healthz and /readyz are unauthenticated and read-only; keep the port on
 * the internal network (compose does not publish it).
 */
export function startWorkerHealth(services: Services, slots: SlotPool, port: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const url = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET")
      return send(405, { error: { code: "method_not_allowed", message: "only GET", type: "invalid_request_error" } });
    if (url === "/healthz") return send(200, { status: "ok" });
    if (url === "/readyz") {
      void services.database.ping().then(
        (up) =>
          up
            ? send(200, { status: "ready", database: services.database.kind, devices: slots.describe() })
            : send(503, { error: { code: "not_ready", message: "the database does not answer", type: "server_error" } }),
        () => send(503, { error: { code: "not_ready", message: "the database does not answer", type: "server_error" } }),
      );
      return;
    }
    if (url === "/metrics") {
      const refused = metricsRefusal(services.config, req.headers.authorization);
      if (refused) {
        res.writeHead(refused.status, { "content-type": "application/json", ...refused.headers });
        res.end(
          JSON.stringify({
            error: {
              code: refused.code,
              message: refused.message,
              type: refused.status === 401 ? "authentication_error" : "not_found_error",
            },
          }),
        );
        return;
      }
      void services.metrics.registry.metrics().then((text) => {
        res.writeHead(200, { "content-type": services.metrics.registry.contentType });
        res.end(text);
      });
      return;
    }
    send(404, { error: { code: "not_found", message: `no route for GET ${url}`, type: "invalid_request_error" } });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, services.config.HOST, () => resolve(server));
  });
}
