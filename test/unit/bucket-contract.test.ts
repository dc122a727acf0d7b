import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BucketLimitError, BucketNotFoundError, deleteUnder, objectPathSegments, type Bucket } from "../../src/storage/bucket.js";
import { parseConfig } from "../../src/config.js";
import { createBucket } from "../../src/storage/index.js";
import { PART_SIZE } from "../../src/storage/s3-bucket.js";
import { StorageUnavailableError } from "../../src/storage/s3-client.js";
import { newS3Bucket, readObject, s3Env, s3StandIn, TEST_STORAGE, testBucket, unfinishedUploads } from "../helpers/storage.js";

// What every bucket adapter promises its callers (src/storage/bucket.ts), run against the local folder and, in the
// storage-s3 project (TEST_STORAGE=s3), against S3 through the real AWS SDK v3 and an S3 stand-in (moto's server
// mode: test/helpers/storage.ts). The GCS adapter has its own test against a fake of the JSON API.

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "bucket-"));
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** `total` bytes of varied content, in 1 MiB chunks, generated as they are read (never one whole buffer). */
function bigBody(total: number, seed = 1): { stream: Readable; sha256: string } {
  const hash = createHash("sha256");
  const chunks: Buffer[] = [];
  for (let at = 0, i = 0; at < total; at += 1024 * 1024, i++) {
    const chunk = Buffer.alloc(Math.min(1024 * 1024, total - at), (i * 31 + seed) & 0xff);
    chunk.writeUInt32BE(i, 0);
    hash.update(chunk);
    chunks.push(chunk);
  }
  return { stream: Readable.from(chunks), sha256: hash.digest("hex") };
}

describe("object paths", () => {
  it.each(["../x.zip", "a/../b.zip", "/abs.zip", "a//b.zip", "a/b/", "a\\b.zip", "a/./b.zip", ""])("refuses %j", (p) => {
    expect(() => objectPathSegments(p)).toThrow();
  });
  it("accepts a normal path", () => {
    expect(objectPathSegments("u1/exp_1/data.zip")).toEqual(["u1", "exp_1", "data.zip"]);
  });
});

describe(`the bucket contract (${TEST_STORAGE})`, () => {
  let dir: string;
  let bucket: Bucket;
  beforeAll(async () => {
    dir = tmp();
    bucket = await testBucket(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes, stats, lists, reads back and reports the sha256", async () => {
    const data = Buffer.from("hello builder");
    const res = await bucket.write("u/e/f.zip", Readable.from([data]));
    expect(res).toEqual({ size: data.length, sha256: sha256(data) });
    expect(await bucket.stat("u/e/f.zip")).toEqual({ size: data.length });
    expect(await bucket.list("u")).toEqual(["u/e/f.zip"]);
    expect((await readObject(bucket, "u/e/f.zip")).toString()).toBe("hello builder");
    const local = path.join(dir, "copy", "f.zip");
    expect(await bucket.downloadTo("u/e/f.zip", local)).toEqual({ size: data.length });
    expect(fs.readFileSync(local).equals(data)).toBe(true);
  });

  it("lists a folder, not every name that starts alike; the whole bucket with an empty prefix", async () => {
    await bucket.write("lst/a/1.txt", Readable.from([Buffer.from("1")]));
    await bucket.write("lst/a/deep/2.txt", Readable.from([Buffer.from("2")]));
    await bucket.write("lst/ab/3.txt", Readable.from([Buffer.from("3")]));
    expect(await bucket.list("lst/a")).toEqual(["lst/a/1.txt", "lst/a/deep/2.txt"]);
    expect(await bucket.list("lst/a/")).toEqual(["lst/a/1.txt", "lst/a/deep/2.txt"]);
    expect(await bucket.list("")).toEqual(expect.arrayContaining(["lst/a/1.txt", "lst/ab/3.txt"]));
    expect(await bucket.list("lst/none")).toEqual([]);
  });

  it("replaces an object written twice", async () => {
    await bucket.write("u/e/twice.csv", Readable.from([Buffer.from("first, longer")]));
    await bucket.write("u/e/twice.csv", Readable.from([Buffer.from("second")]));
    expect((await readObject(bucket, "u/e/twice.csv")).toString()).toBe("second");
  });

  it("leaves nothing behind when a write exceeds the limit", async () => {
    await expect(bucket.write("lim/e/big.zip", Readable.from([Buffer.alloc(1000)]), { maxBytes: 10 })).rejects.toBeInstanceOf(
      BucketLimitError,
    );
    expect(await bucket.stat("lim/e/big.zip")).toBeNull();
    expect(await bucket.list("lim")).toEqual([]);
    if (bucket.kind === "local") expect(fs.readdirSync(path.join(dir, "bucket", "lim", "e"))).toEqual([]);
  });

  it("says not found for a missing object; deleting one is fine", async () => {
    await expect(bucket.read("u/missing.zip")).rejects.toBeInstanceOf(BucketNotFoundError);
    expect(await bucket.stat("u/missing.zip")).toBeNull();
    await bucket.delete("u/missing.zip");
  });

  it("refuses unsafe object paths", async () => {
    await expect(bucket.stat("../x.zip")).rejects.toThrow();
    await expect(bucket.write("a//b.zip", Readable.from([Buffer.from("x")]))).rejects.toThrow();
  });

  it(`streams a large zip in parts (${(3 * PART_SIZE) / 2 ** 20 - 4} MiB: several ${PART_SIZE / 2 ** 20} MiB parts on S3)`, async () => {
    const size = 3 * PART_SIZE - 4 * 1024 * 1024;
    const body = bigBody(size);
    const res = await bucket.write("big/e/scans.zip", body.stream, { maxBytes: 5 * 1024 ** 3, contentType: "application/zip" });
    expect(res).toEqual({ size, sha256: body.sha256 });
    expect(await bucket.stat("big/e/scans.zip")).toEqual({ size });
    const back = createHash("sha256");
    let read = 0;
    for await (const c of await bucket.read("big/e/scans.zip")) {
      back.update(c as Buffer);
      read += (c as Buffer).length;
    }
    expect({ read, sha256: back.digest("hex") }).toEqual({ read: size, sha256: body.sha256 });
    if (bucket.kind === "s3") {
      // A multipart object's ETag is "<md5 of the parts' md5s>-<parts>": three parts, not one PutObject.
      const head = await (await s3StandIn()).client.send(new HeadObjectCommand({ Bucket: bucket.name, Key: "big/e/scans.zip" }));
      expect(head.ETag).toMatch(/-3"?$/);
    }
    await bucket.delete("big/e/scans.zip");
  });

  it("keeps no object and no unfinished upload when a large write fails part-way (limit, or the client goes)", async () => {
    const overLimit = bigBody(2 * PART_SIZE + 1024 * 1024);
    await expect(bucket.write("cut/e/over.zip", overLimit.stream, { maxBytes: PART_SIZE + 1024 * 1024 })).rejects.toBeInstanceOf(
      BucketLimitError,
    );
    // A body that fails after more than one part has been sent: the client disconnecting mid-upload.
    const gone = new Error("client went away");
    const cut = Readable.from(
      (async function* () {
        for (let i = 0; i < PART_SIZE / (1024 * 1024) + 3; i++) yield Buffer.alloc(1024 * 1024, i);
        throw gone;
      })(),
    );
    await expect(bucket.write("cut/e/gone.zip", cut)).rejects.toBe(gone);
    expect(await bucket.list("cut")).toEqual([]);
    expect(await unfinishedUploads(bucket)).toEqual([]);
    if (bucket.kind === "local") expect(fs.readdirSync(path.join(dir, "bucket", "cut", "e"))).toEqual([]);
  });

  it("deleteUnder removes every object under a folder, past one page of 1000 keys, and nothing beside it", async () => {
    const n = 1100;
    const names = Array.from({ length: n }, (_, i) => `erase/u1/models/${i % 7}/f${i}.svg`);
    for (let i = 0; i < n; i += 50) await Promise.all(names.slice(i, i + 50).map((p) => bucket.write(p, Readable.from([randomBytes(16)]))));
    await bucket.write("erase/u10/keep.zip", Readable.from([Buffer.from("keep")]));
    await bucket.write("erase/u1.zip", Readable.from([Buffer.from("keep")]));
    expect(await bucket.list("erase/u1")).toHaveLength(n);

    const sent: string[] = [];
    if (bucket.kind === "s3") {
      const client = (await s3StandIn()).client;
      const send = client.send.bind(client);
      vi.spyOn(client, "send").mockImplementation(((command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        return send(command as never);
      }) as never);
    }
    try {
      expect(await deleteUnder(bucket, "erase/u1/")).toBe(n);
    } finally {
      vi.restoreAllMocks();
    }
    expect(await bucket.list("erase/u1")).toEqual([]);
    expect(await bucket.list("erase")).toEqual(["erase/u1.zip", "erase/u10/keep.zip"]);
    expect(await deleteUnder(bucket, "erase/u1/")).toBe(0); // idempotent
    if (bucket.kind === "s3") {
      // Two pages: two ListObjectsV2 and two DeleteObjects of at most 1000 keys, not 1100 DeleteObject calls.
      expect(sent.filter((c) => c === "DeleteObjectsCommand")).toHaveLength(2);
      expect(sent.filter((c) => c === "ListObjectsV2Command")).toHaveLength(2);
      expect(sent).not.toContain("DeleteObjectCommand");
    } else {
      expect(fs.existsSync(path.join(dir, "bucket", "erase", "u1"))).toBe(false);
    }
  }, 120_000);
});

describe.runIf(TEST_STORAGE === "s3")("an S3 bucket at start-up", () => {
  const start = async (env: Record<string, string>) => createBucket(parseConfig({ BUILDER_DATA_DIR: tmp(), ...env }));

  it("is used when its settings are right", async () => {
    const { name, standIn } = await newS3Bucket();
    const bucket = await start(s3Env(standIn.endpoint, name));
    expect([bucket.kind, bucket.name]).toEqual(["s3", name]);
    bucket.close?.();
  });

  it("stops Builder with one sentence saying what is wrong: a bucket that does not exist, a store that does not answer", async () => {
    const { standIn } = await newS3Bucket();
    await expect(start(s3Env(standIn.endpoint, "no-such-bucket"))).rejects.toThrow(
      new StorageUnavailableError(
        `cannot use the S3 bucket no-such-bucket at ${standIn.endpoint}: the bucket does not exist there: create it first (Builder does not create buckets)`,
      ),
    );
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    await expect(start(s3Env(`http://127.0.0.1:${closed}`, "builder-data"))).rejects.toThrow(
      /^cannot use the S3 bucket builder-data at http:\/\/127\.0\.0\.1:\d+: the store did not answer \(ECONNREFUSED/,
    );
  });
});
