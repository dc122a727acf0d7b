import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import type { Socket } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { Readable } from "node:stream";
import { CreateBucketCommand, ListMultipartUploadsCommand, S3Client } from "@aws-sdk/client-s3";
import type { Bucket } from "../../src/storage/bucket.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";
import { S3Bucket } from "../../src/storage/s3-bucket.js";

// One storage suite, two backends. The files listed in vitest.config.ts (STORAGE_SUITE) run once against the local
// folder and once more, in the `storage-s3` project, with TEST_STORAGE=s3: every Builder they start (startTestServer,
// or storageEnv() for servers they start themselves) then keeps its objects in a fresh bucket of an S3 stand-in,
// moto's server mode (test/helpers/s3_standin.py), reached through the real AWS SDK v3 with path-style addressing
// as MinIO, Ceph RGW and StorageGRID are. The stand-in speaks the S3 protocol; it is not one of those stores.

export type StorageBackend = "local" | "s3";
export const TEST_STORAGE: StorageBackend = process.env.TEST_STORAGE === "s3" ? "s3" : "local";

const ROOT = path.resolve(import.meta.dirname, "../..");
const REGION = "us-east-1";
// moto accepts any key; these are the stand-in's, not a secret.
const KEY = { accessKeyId: "builder-test", secretAccessKey: "builder-test-secret" };

export interface S3StandIn {
  endpoint: string;
  /** A client of the stand-in, for what Builder's own adapter does not do (creating buckets, listing uploads). */
  client: S3Client;
}

let standIn: Promise<S3StandIn> | undefined;

/** The S3 stand-in of this test process, started on first use; it ends when the process does. */
export function s3StandIn(): Promise<S3StandIn> {
  standIn ??= startStandIn();
  return standIn;
}

async function startStandIn(): Promise<S3StandIn> {
  const python = path.join(ROOT, ".venv-dev/bin/python");
  if (!fs.existsSync(python))
    throw new Error(
      "the S3 stand-in needs .venv-dev (moto): run make test, or python3 -m venv .venv-dev && .venv-dev/bin/pip install -r test/requirements-dev.txt",
    );
  const child = spawn(python, [path.join(ROOT, "test/helpers/s3_standin.py")], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the S3 stand-in exited (code ${code}) before listening`)));
    createInterface({ input: child.stdout! }).once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  // Neither the child nor its pipes keep this process alive; when it ends, the stand-in reads the end of its
  // standard input and stops.
  child.unref();
  (child.stdin as unknown as Socket).unref();
  (child.stdout as unknown as Socket).unref();
  const endpoint = `http://127.0.0.1:${port}`;
  return { endpoint, client: new S3Client({ endpoint, region: REGION, forcePathStyle: true, credentials: KEY }) };
}

/** A new, empty bucket on the stand-in. */
export async function newS3Bucket(): Promise<{ name: string; standIn: S3StandIn }> {
  const s = await s3StandIn();
  const name = `builder-test-${randomBytes(6).toString("hex")}`;
  await s.client.send(new CreateBucketCommand({ Bucket: name }));
  return { name, standIn: s };
}

/** The S3 settings of a Builder that uses `bucket` on the stand-in (the variables an operator sets). */
export function s3Env(endpoint: string, bucket: string): Record<string, string> {
  return {
    S3_ENDPOINT: endpoint,
    S3_BUCKET: bucket,
    S3_REGION: REGION,
    AWS_ACCESS_KEY_ID: KEY.accessKeyId,
    AWS_SECRET_ACCESS_KEY: KEY.secretAccessKey,
  };
}

/**
 * The environment that points a Builder at the storage under test: nothing for the local folder (its own data
 * folder's bucket/), a fresh S3 bucket otherwise. Replicas that share storage get the same environment.
 */
export async function storageEnv(): Promise<Record<string, string>> {
  if (TEST_STORAGE === "local") return {};
  const { name, standIn: s } = await newS3Bucket();
  return s3Env(s.endpoint, name);
}

/** A bucket of the storage under test, for tests that use the adapter directly: a folder under `dir`, or S3. */
export async function testBucket(dir: string): Promise<Bucket> {
  if (TEST_STORAGE === "local") return new LocalBucket(path.join(dir, "bucket"));
  const { name, standIn: s } = await newS3Bucket();
  return new S3Bucket(s.client, name);
}

/**
 * What a data folder and its bucket hold, relative and sorted, the bucket's objects as `bucket/<path>` wherever
 * the bucket is: the "before" and "after" of an upload or a deletion, the same on both backends. The local
 * folder's files are read from disk, so a leftover temp file (.partial) shows too.
 */
export async function storedFiles(dataDir: string, bucket: Bucket): Promise<string[]> {
  const local = filesUnder(dataDir);
  if (bucket.kind === "local") return local;
  const objects = (await bucket.list("")).map((o) => `bucket/${o}`);
  return [...local.filter((f) => !f.startsWith("bucket/")), ...objects].sort();
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith("pglite/") && !f.endsWith(".sock"))
    .sort();
}

/** Writes an object as a job or another host would have left it; returns its `bucket/<path>` name (storedFiles). */
export async function plantObject(bucket: Bucket, objectPath: string, content = "x"): Promise<string> {
  await bucket.write(objectPath, Readable.from([Buffer.from(content)]));
  return `bucket/${objectPath}`;
}

/** The bucket's bytes at `objectPath`. */
export async function readObject(bucket: Bucket, objectPath: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await bucket.read(objectPath)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Multipart uploads begun and never completed nor aborted (S3: their parts are stored, and billed, until someone
 * aborts them). The local folder's counterpart is a .partial file, which storedFiles shows.
 */
export async function unfinishedUploads(bucket: Bucket): Promise<string[]> {
  if (bucket.kind !== "s3") return [];
  const s = await s3StandIn();
  const res = await s.client.send(new ListMultipartUploadsCommand({ Bucket: bucket.name }));
  return (res.Uploads ?? []).map((u) => u.Key!).sort();
}
