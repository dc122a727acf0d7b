import fs from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { z } from "zod";
import { SIMULATED_GPUS_FORMAT } from "./jobs/simulated-gpus.js";

// Every environment variable Builder reads, in one schema, parsed once at boot.
// A bad value fails start-up with every problem listed, not the first one only.

const bool = z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => v === "true" || v === "1" || v === "yes");
const int = (min: number) => z.coerce.number().int().min(min);
const DEFAULT_BUDGETS = JSON.parse(fs.readFileSync(new URL("../pipelines/contract/budgets.json", import.meta.url), "utf8")) as {
  fast: number;
  best: number;
};
// .env.example's placeholders all start with "change-me" (a test keeps it so). A secret still carrying one is
// the example, copied but not edited: refused at start, so no deployment runs on a password printed in the repo.
const EXAMPLE_SECRET = /change-?me/i;
const PLACEHOLDER =
  "still holds .env.example's placeholder (change-me...): set a long random value in .env, e.g. the output of: openssl rand -hex 24";
/** A secret (the value itself, or the password inside a URL) refused while it carries the placeholder. */
const notPlaceholder = <T extends z.ZodType<string>>(schema: T, secretOf: (v: string) => string | undefined = (v) => v) =>
  schema.refine((v) => !EXAMPLE_SECRET.test(secretOf(v) ?? ""), PLACEHOLDER);
/** Variables whose values are secrets: never echoed in a configuration error (that goes to the logs). */
const SECRET_VARS = new Set([
  "DATABASE_URL",
  "REDIS_URL",
  "POSTGRES_PASSWORD",
  "REDIS_PASSWORD",
  "METRICS_TOKEN",
  "CALLBACK_SECRET",
  "SECRETS_KEY",
  "SMTP_PASSWORD",
  "CHAT_API_KEY",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
]);
// Express's "trust proxy": a comma-separated list of loopback | linklocal | uniquelocal | IP | IP/prefix.
const PROXY_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);
const trustProxy = z.string().refine(
  (s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .every((x) => PROXY_NAMES.has(x) || isIP(x.split("/")[0]) !== 0),
  "a comma-separated list of loopback, linklocal, uniquelocal, IP addresses or IP/prefix ranges",
);
const csvList = z.string().transform((s) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean),
);

export const configSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    PORT: int(0).max(65535).default(8080),
    // This machine only, unless told otherwise (issue 48 finding 17): `make start` serves plain HTTP, which the network
    // should not reach by accident. The image sets HOST=0.0.0.0 (Dockerfile): compose, swarm and Kubernetes publish the
    // container's port, and their probes and proxy reach it from outside the container.
    HOST: z.string().default("127.0.0.1"),
    // The proxies whose X-Forwarded-For is believed (client addresses for the sign-in and sign-up limits, and logs).
    // compose.yaml sets "loopback, uniquelocal": its TLS proxy reaches the API from the compose network, and it
    // overwrites X-Forwarded-For with the address it saw, so a client cannot choose its own.
    TRUST_PROXY: trustProxy.default("loopback"),
    BUILDER_DATA_DIR: z.string().default("./data"),
    DATABASE_URL: notPlaceholder(z.string().url(), urlPassword).optional(),
    REDIS_URL: notPlaceholder(z.string().url(), urlPassword).optional(),
    // compose.yaml builds DATABASE_URL and REDIS_URL from these two (.env); Builder reads them only to refuse
    // .env.example's placeholders.
    POSTGRES_PASSWORD: notPlaceholder(z.string()).optional(),
    REDIS_PASSWORD: notPlaceholder(z.string()).optional(),
    /** Bearer token for GET /metrics (the API's and the worker's); unset = /metrics is off (src/auth/metrics-access.ts). */
    METRICS_TOKEN: notPlaceholder(z.string().min(16)).optional(),
    // Object storage (src/storage): the folder BUILDER_DATA_DIR/bucket by default; Google Cloud Storage with
    // GCS_BUCKET; S3 or an S3-compatible store (MinIO, Ceph RGW, StorageGRID) with S3_BUCKET. Hosts that share
    // one bucket see each other's datasets and models.
    GCS_BUCKET: z.string().min(1).optional(),
    S3_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens")
      .optional(),
    /** The S3 API's address (https://minio.hospital.example:9000); unset = Amazon S3 itself (S3_REGION's endpoint). */
    S3_ENDPOINT: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), "an http:// or https:// URL")
      .optional(),
    S3_REGION: z.string().min(1).default("us-east-1"),
    // Path-style addressing (https://endpoint/bucket/key), what MinIO, Ceph RGW and StorageGRID expect by default;
    // virtual-hosted (https://bucket.endpoint/key) is Amazon's. Unset: path-style when S3_ENDPOINT is set.
    S3_FORCE_PATH_STYLE: bool.optional(),
    // Credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, or S3_CREDENTIALS_FILE (an AWS shared credentials
    // file, e.g. a Docker secret, profile S3_PROFILE), or else the AWS SDK's own chain (~/.aws/credentials,
    // AWS_PROFILE, an instance or pod role).
    AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
    AWS_SECRET_ACCESS_KEY: notPlaceholder(z.string().min(1)).optional(),
    AWS_SESSION_TOKEN: z.string().min(1).optional(),
    S3_CREDENTIALS_FILE: z.string().refine(readableFile, "a readable file (an AWS shared credentials file)").optional(),
    S3_PROFILE: z.string().min(1).default("default"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    PUBLIC_URL: z.string().url().optional(),
    // Rate limits (requests per minute per API key unless the key sets its own).
    RATE_LIMIT_PER_MINUTE: int(1).default(600),
    /** How long an API-key lookup is remembered (revocations reach every process at once by LISTEN/NOTIFY); 0 = off. */
    API_KEY_CACHE_TTL_S: int(0).default(60),
    // Redis key prefix of the rate-limit counters (tests use a unique one per run so runs never collide).
    RATE_LIMIT_KEY_PREFIX: z.string().min(1).default("builder:rl"),
    // Sign-in: attempts per address+email pair before a doubling backoff, and per address over all emails.
    SIGNIN_ATTEMPTS_PER_15_MIN: int(1).default(10),
    SIGNIN_ATTEMPTS_PER_ADDRESS_PER_15_MIN: int(1).default(100),
    SESSION_TTL_HOURS: int(1).default(12),
    COOKIE_SECURE: bool.optional(),
    /** Lets anyone who can reach the dashboard create an account at /signup (off: users come from ./builder users create). */
    SIGNUP_ENABLED: bool.default(false),
    // How long the setup code `./builder serve` prints works (issue 48 finding 11); a restart prints a new one.
    SETUP_CODE_TTL_HOURS: int(1)
      .max(24 * 30)
      .default(24),
    // Uploads and zip extraction limits.
    MAX_UPLOAD_BYTES: int(1).default(5 * 1024 ** 3),
    ZIP_MAX_ENTRIES: int(1).default(200_000),
    ZIP_MAX_UNCOMPRESSED_BYTES: int(1).default(20 * 1024 ** 3),
    ZIP_MAX_COMPRESSION_RATIO: int(1).default(200),
    /** A dataset check (POST /v1/datasets/validate, an experiment's validating stage) stops with validation_timeout past this. */
    VALIDATION_TIMEOUT_S: z.coerce.number().positive().default(600),
    // Jobs.
    // Training jobs a runner (serve's in-process runner, or one worker) runs at once. Unset: one per GPU it sees
    // (nvidia-smi, narrowed by CUDA_VISIBLE_DEVICES), or 1 without a GPU. Jobs are pinned to a GPU each.
    BUILDER_GPU_SLOTS: int(1).optional(),
    // On a host with GPUs: CPU-only slots beside them for tabular (LightGBM) jobs, which need no GPU and so never
    // hold or wait for one. 0 = tabular jobs take a free GPU slot. No effect without a GPU (every slot is a CPU slot).
    BUILDER_CPU_SLOTS: int(0).default(1),
    // The port the worker's /healthz, /readyz (devices) and /metrics listen on; 0 = none.
    // Off by default: several workers on one host would fight over one port; the image sets 8081 for its HEALTHCHECK.
    WORKER_PORT: int(0).max(65535).default(0),
    BUILDER_RUNNER: z.enum(["inprocess", "bullmq"]).default("inprocess"),
    // For tests of routing on hosts without a GPU: the GPUs `./builder worker` declares instead of asking nvidia-smi
    // ("1", "2x80GB"). They are placed on like GPUs and shown as simulated; their jobs train on the CPU.
    BUILDER_SIMULATE_GPUS: z
      .string()
      .regex(SIMULATED_GPUS_FORMAT, "a GPU count, optionally with each GPU's memory: 1, 2x80GB, 2x40960MiB")
      .optional(),
    PYTHON_BIN: z.string().optional(),
    // One set of default budgets for the server, the pipelines and the benchmarks: pipelines/contract/budgets.json.
    FAST_BUDGET_S: int(5).default(DEFAULT_BUDGETS.fast),
    BEST_BUDGET_S: int(10).default(DEFAULT_BUDGETS.best),
    JOB_TIMEOUT_FACTOR: z.coerce.number().min(1).default(3),
    CALLBACK_SECRET: notPlaceholder(z.string().min(16)).optional(),
    CALLBACK_RETRY_BASE_MS: int(1).default(1000),
    // Seals the secrets Builder must give back to another server (the PACS password, src/pacs/secret-box.ts). Unset:
    // a random key kept in BUILDER_DATA_DIR/secrets.key (replicas with separate data folders must share one).
    SECRETS_KEY: notPlaceholder(z.string().min(32, "at least 32 characters, e.g. the output of: openssl rand -hex 32")).optional(),
    // Answers written back to the PACS by STOW-RS: tries per object, the first wait between them (doubled each time).
    PACS_SEND_ATTEMPTS: int(1).default(4),
    PACS_RETRY_BASE_MS: int(1).default(1000),
    // Scoring new studies as they arrive (src/pacs/auto-score.ts): how often each server reads its users' PACS change
    // feeds (0: never, on this replica), and how long a replica's hold on a feed lasts without renewal.
    PACS_AUTO_SCORE_POLL_MS: int(0).default(5000),
    PACS_AUTO_SCORE_LEASE_MS: int(1000).default(60000),
    // Crash safety: a runner renews its experiment's lease every second; a lease unrenewed for JOB_LEASE_S is
    // taken over. BullMQ's lockDuration and stalledInterval derive from it, so every worker agrees.
    JOB_LEASE_S: int(1).default(30),
    JOB_MAX_ATTEMPTS: int(1).default(3),
    /** New experiments are refused (429 too_many_experiments) while a user has this many queued or running. */
    MAX_ACTIVE_EXPERIMENTS_PER_USER: int(1).default(10),
    // Events streams (GET /v1/experiments/{id}/events and GET /v1/batches/{id}/events, counted together): open streams
    // per user in one API process (more is 429
    // too_many_streams), and how long one stream lives before it ends with a `reconnect` event (the client
    // resumes with Last-Event-ID and loses nothing), so a forgotten tab does not hold its slot for ever.
    EVENT_STREAMS_PER_USER: int(1).default(10),
    EVENT_STREAM_MAX_S: int(1).default(1800),
    BULLMQ_QUEUE: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default("builder-experiments"),
    // Monitoring (issue 49, docs/monitoring.md): how often serving writes its aggregates and prediction records, how
    // long a prediction record is kept (the EU AI Act asks deployers for at least six months).
    MONITORING_FLUSH_MS: int(100).default(5000),
    PREDICTION_RETENTION_DAYS: int(1).default(190),
    // Alerts (docs/monitoring.md#alerts): how often each server evaluates the models' rules (0: never, on this
    // replica; the database records each alert once whichever replica sees it first), how often it looks for
    // deliveries due, how many tries a delivery gets and the first wait between them (doubled each time).
    ALERT_EVALUATE_MS: int(0).default(60_000),
    ALERT_DELIVERY_POLL_MS: int(0).default(2000),
    ALERT_DELIVERY_ATTEMPTS: int(1).default(8),
    ALERT_RETRY_BASE_MS: int(1).default(30_000),
    // E-mail for alerts: unset SMTP_HOST sends none. SMTP_SECURITY: starttls (required), tls (port 465), none (a relay
    // on the host's own network only).
    SMTP_HOST: z.string().min(1).optional(),
    SMTP_PORT: int(1).max(65535).default(587),
    SMTP_SECURITY: z.enum(["starttls", "tls", "none"]).default("starttls"),
    SMTP_FROM: z.string().email("an e-mail address, e.g. builder@hospital.example").optional(),
    SMTP_USER: z.string().min(1).optional(),
    SMTP_PASSWORD: z.string().min(1).optional(),
    // Serving.
    ORT_INTRA_OP_THREADS: int(0).default(0),
    MODEL_CACHE_MAX_MB: int(16).default(2048),
    GRADCAM_MAX_SIDE: int(16).default(512),
    // A batch with Grad-CAM overlays (POST /v1/models/{id}/batch?overlays=true) takes at most this many images (more is
    // a 413 too_many_images at once): each overlay costs its map and a PNG (bench/batch/README.md has the figure).
    BATCH_OVERLAYS_MAX_IMAGES: int(1).default(2000),
    // Batches one API process scores at once; at most one of them per user, and a free slot goes to the waiting user
    // served least recently, so one user's files never hold another's behind them (src/batches/fair-queue.ts).
    BATCH_CONCURRENCY: int(1).max(64).default(2),
    // Cells (rows x columns) of a table a batch reads, .xlsx or CSV; more fails the batch with the limit named.
    BATCH_MAX_CELLS: int(1).default(10_000_000),
    // Concurrent /predict requests for one model run as one batch of at most this many (1 = no batching).
    // Unset: 16 when the CUDA execution provider is available, 1 on CPU, where bench/serve measured no gain.
    SERVING_MAX_BATCH: int(1).max(256).optional(),
    // Worker threads per image model, each with its own ONNX Runtime session, on which a whole prediction runs
    // (decode, resize, inference, maps, JSON). Unset: one per core, at most 4. Each holds a copy of the model.
    SERVING_THREADS_PER_MODEL: int(1).max(64).optional(),
    // JPEG decoding on those threads: auto = libjpeg-turbo's TurboJPEG library when the host has it (Debian:
    // libturbojpeg0; same pixels as sharp, a third of the CPU), else sharp; sharp = always sharp.
    JPEG_DECODER: z.enum(["auto", "sharp"]).default("auto"),
    FETCH_MAX_BYTES: int(1).default(20 * 1024 * 1024),
    FETCH_TIMEOUT_MS: int(100).default(10_000),
    FETCH_MAX_PIXELS: int(1).default(50_000_000),
    FETCH_ALLOW_HOSTS: csvList.default([]),
    // Chat assistant: builtin (templates over the caller's data, no network) or any OpenAI-compatible server.
    CHAT_BACKEND: z.enum(["builtin", "openai"]).default("builtin"),
    CHAT_BASE_URL: z.string().url().optional(),
    CHAT_API_KEY: z.string().optional(),
    CHAT_MODEL: z.string().min(1).default("gpt-4o-mini"),
    CHAT_TIMEOUT_MS: int(100).default(60_000),
    CHAT_MAX_RETRIES: int(0).max(10).default(2),
  })
  .superRefine((c, ctx) => {
    const problem = (name: string, message: string) => ctx.addIssue({ code: "custom", path: [name], message });
    if (c.GCS_BUCKET && c.S3_BUCKET) problem("S3_BUCKET", "GCS_BUCKET is set too: Builder uses one bucket, set only one of them");
    if (!c.S3_BUCKET) {
      for (const name of ["S3_ENDPOINT", "S3_CREDENTIALS_FILE", "S3_FORCE_PATH_STYLE"] as const)
        if (c[name] !== undefined) problem(name, "is set but S3_BUCKET is not: set S3_BUCKET to store in S3");
    }
    if (c.S3_BUCKET) {
      if (c.AWS_ACCESS_KEY_ID && !c.AWS_SECRET_ACCESS_KEY)
        problem("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID is set: set its secret key too");
      if (c.AWS_SECRET_ACCESS_KEY && !c.AWS_ACCESS_KEY_ID) problem("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY is set: set its key id too");
      if (c.S3_CREDENTIALS_FILE && c.AWS_ACCESS_KEY_ID)
        problem("S3_CREDENTIALS_FILE", "AWS_ACCESS_KEY_ID is set too: give the S3 credentials one way, the file or the two variables");
    }
    if (c.SMTP_HOST && !c.SMTP_FROM) problem("SMTP_FROM", "SMTP_HOST is set: set the address alerts are sent from too");
    if (c.SMTP_USER && !c.SMTP_PASSWORD) problem("SMTP_PASSWORD", "SMTP_USER is set: set its password too");
    if (c.CHAT_BACKEND === "openai" && !c.CHAT_BASE_URL) {
      ctx.addIssue({
        code: "custom",
        path: ["CHAT_BASE_URL"],
        message: "CHAT_BACKEND=openai needs CHAT_BASE_URL (e.g. http://localhost:8000/v1 for vLLM)",
      });
    }
  });

function readableFile(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The password in a postgres:// or redis:// URL, decoded; undefined when there is none or the URL is malformed. */
function urlPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

export type Config = z.infer<typeof configSchema> & { dataDir: string };

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join("\n  - ")}`);
  }
}

export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "unset" (a common way to blank a variable in .env files).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = configSchema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = String(i.path[0]);
        // A secret's value would end up in the logs beside the message: say only that one was given.
        const got = SECRET_VARS.has(name) ? "a value not shown here: it is a secret" : JSON.stringify(cleaned[name]);
        return `${i.path.join(".") || "(env)"}: ${i.message} (got ${got})`;
      }),
    );
  }
  return { ...result.data, dataDir: path.resolve(result.data.BUILDER_DATA_DIR) };
}

let cached: Config | undefined;
/** The process-wide configuration, parsed on first use. */
export function config(): Config {
  cached ??= parseConfig();
  return cached;
}
