import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { parseConfig } from "../../src/config.js";
import { queueName, redisConnection } from "../../src/jobs/queues.js";
import { createServices, type Services } from "../../src/services.js";
import { createThrowawayDatabase } from "../helpers/db.js";
import { createUserWithKey } from "../helpers/auth.js";
import type { TestServer } from "../helpers/server.js";
import { makeZip } from "../helpers/zips.js";
import { tabularZip, waitFor, type Api } from "./experiments-fixtures.js";

// Several real Builder processes (`./builder serve`, `./builder worker`) started as children on one throwaway
// Postgres database and one data folder: the crash tests and the workers' routing test share it.

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The pipeline processes of an experiment, by their spec path. */
export const pythonOf = (uuid: string) => {
  try {
    return execFileSync("pgrep", ["-f", `work/${uuid}/spec.json`])
      .toString()
      .trim()
      .split("\n")
      .filter(Boolean);
  } catch {
    return [];
  }
};

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

export interface Cluster {
  env: Record<string, string>;
  services: Services;
  client?: Api;
  userId: string;
  key: string;
  zipPath: string;
  dataCols: string[];
  children: ChildProcess[];
  start(command: "serve" | "worker", extraEnv?: Record<string, string>, args?: string[]): ChildProcess;
  close(): Promise<void>;
}

/** One throwaway Postgres database and data folder shared by the child processes and the test. */
export async function cluster(env: Record<string, string>): Promise<Cluster> {
  const db = await createThrowawayDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "builder-crash-"));
  const base: Record<string, string> = {
    DATABASE_URL: db.url,
    BUILDER_DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
    JOB_LEASE_S: "3",
    ...env,
  };
  const services = await createServices(parseConfig({ ...base, LOG_LEVEL: "silent" }), { runner: false });
  const user = await createUserWithKey({ services } as TestServer);
  const data = tabularZip();
  const zipPath = `${user.userId}/tabular/data.zip`;
  await services.bucket.write(zipPath, Readable.from(data.zip));
  const children: ChildProcess[] = [];
  return {
    env: base,
    services,
    userId: user.userId,
    key: user.key,
    zipPath,
    dataCols: data.dataCols,
    children,
    start(command, extraEnv = {}, args = []) {
      const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", command, ...args], {
        cwd: ROOT,
        env: { ...process.env, ...base, ...extraEnv },
        stdio: ["ignore", "ignore", process.env.TEST_LOG_LEVEL ? "inherit" : "ignore"],
      });
      children.push(child);
      return child;
    },
    async close() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
      if (base.REDIS_URL && "BULLMQ_QUEUE" in base) {
        // Leave nothing of this test's queues and worker registry behind in the shared Redis.
        const connection = redisConnection(base.REDIS_URL);
        const q = base.BULLMQ_QUEUE;
        const keys = [
          ...(await connection.keys(`bull:${queueName(q, "gpu")}:*`)),
          ...(await connection.keys(`bull:${queueName(q, "cpu")}:*`)),
          `builder:${q}:workers`,
          `builder:${q}:drain`,
        ];
        await connection.del(...keys);
        await connection.quit();
      }
      await services.close();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitHealthy(url: string) {
  await waitFor(`${url} to answer`, async () => (await fetch(`${url}/healthz`).catch(() => null))?.ok, 60_000, 300);
}

/** A small two-class image dataset (a bright square or not), for image jobs that must run but need not learn much. */
export async function imageZip(): Promise<Buffer> {
  const files: Record<string, Buffer | string> = {};
  const rows = ["patient,label,image"];
  for (let i = 0; i < 40; i++) {
    const label = i % 2;
    const px = Buffer.alloc(16 * 16, (i * 7) % 50);
    if (label) for (let j = 0; j < px.length; j++) if (j % 16 > 4 && j % 16 < 12 && j / 16 > 4 && j / 16 < 12) px[j] = 220;
    files[`images/${i}.png`] = await sharp(px, { raw: { width: 16, height: 16, channels: 1 } })
      .png()
      .toBuffer();
    rows.push(`p${i},${label},images/${i}.png`);
  }
  files["labels.csv"] = rows.join("\n") + "\n";
  return makeZip(files);
}
