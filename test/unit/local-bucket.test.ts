import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BucketLimitError, BucketNotFoundError, objectPathSegments } from "../../src/storage/bucket.js";
import { LocalBucket } from "../../src/storage/local-bucket.js";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "bucket-"));

describe("object paths", () => {
  it.each(["../x.zip", "a/../b.zip", "/abs.zip", "a//b.zip", "a/b/", "a\\b.zip", "a/./b.zip", ""])("refuses %j", (p) => {
    expect(() => objectPathSegments(p)).toThrow();
  });
  it("accepts a normal path", () => {
    expect(objectPathSegments("u1/exp_1/data.zip")).toEqual(["u1", "exp_1", "data.zip"]);
  });
});

describe("LocalBucket", () => {
  it("writes, stats, lists, reads back and reports the sha256", async () => {
    const bucket = new LocalBucket(tmp());
    const data = Buffer.from("hello builder");
    const res = await bucket.write("u/e/f.zip", Readable.from([data]));
    expect(res).toEqual({ size: data.length, sha256: createHash("sha256").update(data).digest("hex") });
    expect(await bucket.stat("u/e/f.zip")).toEqual({ size: data.length });
    expect(await bucket.list("u")).toEqual(["u/e/f.zip"]);
    const chunks: Buffer[] = [];
    for await (const c of await bucket.read("u/e/f.zip")) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe("hello builder");
  });

  it("leaves nothing behind when a write exceeds the limit", async () => {
    const root = tmp();
    const bucket = new LocalBucket(root);
    await expect(bucket.write("u/e/big.zip", Readable.from([Buffer.alloc(1000)]), { maxBytes: 10 })).rejects.toBeInstanceOf(
      BucketLimitError,
    );
    expect(await bucket.stat("u/e/big.zip")).toBeNull();
    expect(fs.readdirSync(path.join(root, "u", "e"))).toEqual([]);
  });

  it("says not found for a missing object", async () => {
    await expect(new LocalBucket(tmp()).read("u/missing.zip")).rejects.toBeInstanceOf(BucketNotFoundError);
  });
});
