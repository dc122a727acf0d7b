import { pino, type Logger } from "pino";

export type { Logger };

// JSON logs to stdout. Secrets never reach a log line: the redact list covers the places they could appear.
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: "builder" },
    redact: {
      paths: ["req.headers.authorization", "req.headers.cookie", "req.headers['x-csrf-token']", "*.user_token", "*.password", "*.key"],
      censor: "[redacted]",
    },
  });
}
