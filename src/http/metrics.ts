import client from "prom-client";

// Prometheus metrics. One registry per app instance, so tests that build several apps do not collide.
export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({
    name: "builder_http_requests_total",
    help: "HTTP requests by route, method and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: "builder_http_request_duration_seconds",
    help: "HTTP request latency by route, method and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { registry, requests, latency };
}

export type Metrics = ReturnType<typeof createMetrics>;
