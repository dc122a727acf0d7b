import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BucketLimitError, BucketNotFoundError } from "../../src/storage/bucket.js";
import { GcsBucket } from "../../src/storage/gcs-bucket.js";

// No Google Cloud Storage emulator installs offline, so this test runs the REAL @google-cloud/storage
// client (through GcsBucket, with STORAGE_EMULATOR_HOST) against a small local HTTP server that speaks
// the few JSON-API calls the adapter uses: multipart upload, object metadata, media download, list, delete.
// It checks the adapter's use of the client, not Google's service itself.

interface Stored {
  data: Buffer;
  contentType: string;
}

function fakeGcs() {
  const objects = new Map<string, Stored>();
  const calls: string[] = [];
  const meta = (bucket: string, name: string, o: Stored) => ({
    kind: "storage#object",
    bucket,
    name,
    size: String(o.data.length),
    contentType: o.contentType,
    md5Hash: createHash("md5").update(o.data).digest("base64"),
    generation: "1",
  });
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, "http://x");
    const p = url.pathname.replace(/^\/storage\/v1/, "").replace(/^\/download\/storage\/v1/, "");
    calls.push(`${req.method} ${url.pathname}${url.search}`);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    let aborted = false;
    req.on("aborted", () => (aborted = true));
    await new Promise<void>((r) => {
      req.on("end", () => r());
      req.on("close", () => r());
    });
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const notFound = () => json(404, { error: { code: 404, message: "No such object" } });
    let m: RegExpMatchArray | null;
    if (req.method === "POST" && (m = url.pathname.match(/^\/upload\/storage\/v1\/b\/([^/]+)\/o$/))) {
      // multipart/related: JSON metadata part, then the media part. Stored only when the body is complete.
      if (aborted || !req.complete) return;
      const body = Buffer.concat(chunks);
      const boundary = /boundary=("?)([^";]+)\1/.exec(req.headers["content-type"] ?? "")![2];
      const parts = splitMultipart(body, boundary);
      const metadata = JSON.parse(parts[0].body.toString());
      const name = metadata.name ?? url.searchParams.get("name");
      const o = { data: parts[1].body, contentType: metadata.contentType ?? "application/octet-stream" };
      objects.set(`${m[1]}/${name}`, o);
      return json(200, meta(m[1], name, o));
    }
    if ((m = p.match(/^\/b\/([^/]+)\/o\/(.+)$/))) {
      const key = `${m[1]}/${decodeURIComponent(m[2])}`;
      const o = objects.get(key);
      if (req.method === "DELETE") {
        if (!o) return notFound();
        objects.delete(key);
        res.writeHead(204).end();
        return;
      }
      if (!o) return notFound();
      if (url.searchParams.get("alt") === "media") {
        res.writeHead(200, { "content-type": o.contentType, "content-length": o.data.length });
        return res.end(o.data);
      }
      return json(200, meta(m[1], decodeURIComponent(m[2]), o));
    }
    if (req.method === "GET" && (m = p.match(/^\/b\/([^/]+)\/o$/))) {
      const prefix = url.searchParams.get("prefix") ?? "";
      const items = [...objects]
        .filter(([k]) => k.startsWith(`${m![1]}/${prefix}`))
        .map(([k, o]) => meta(m![1], k.slice(m![1].length + 1), o));
      return json(200, { kind: "storage#objects", items });
    }
    json(400, { error: { code: 400, message: `fake GCS does not speak ${req.method} ${url.pathname}` } });
  });
  return { server, objects, calls };
}

function splitMultipart(body: Buffer, boundary: string): Array<{ body: Buffer }> {
  const sep = Buffer.from(`--${boundary}`);
  const out: Array<{ body: Buffer }> = [];
  let i = body.indexOf(sep);
  while (i >= 0) {
    const next = body.indexOf(sep, i + sep.length);
    if (next < 0) break;
    const part = body.subarray(i + sep.length, next);
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd >= 0) out.push({ body: part.subarray(headerEnd + 4, part.length - 2) });
    i = next;
  }
  return out;
}

describe("GcsBucket (real @google-cloud/storage client against a local fake of the JSON API)", () => {
  const fake = fakeGcs();
  let bucket: GcsBucket;
  const before = process.env.STORAGE_EMULATOR_HOST;

  beforeAll(async () => {
    await new Promise<void>((r) => fake.server.listen(0, "127.0.0.1", () => r()));
    process.env.STORAGE_EMULATOR_HOST = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    bucket = new GcsBucket("builder-test", { projectId: "test", retryOptions: { autoRetry: false } });
  });
  afterAll(async () => {
    if (before === undefined) delete process.env.STORAGE_EMULATOR_HOST;
    else process.env.STORAGE_EMULATOR_HOST = before;
    fake.server.closeAllConnections(); // the client keeps connections alive
    await new Promise((r) => fake.server.close(r));
  });

  it("writes with the sha256, stats, lists, reads back, downloads and deletes", async () => {
    const data = Buffer.from("zip bytes ".repeat(1000));
    const res = await bucket.write("u1/exp/data.zip", Readable.from([data]), { contentType: "application/zip" });
    expect(res).toEqual({ size: data.length, sha256: createHash("sha256").update(data).digest("hex") });
    expect(fake.objects.get("builder-test/u1/exp/data.zip")?.data.equals(data)).toBe(true);
    expect(await bucket.stat("u1/exp/data.zip")).toEqual({ size: data.length });
    expect(await bucket.stat("u1/exp/none.zip")).toBeNull();
    await bucket.write("u2/exp/other.zip", Readable.from([Buffer.from("x")]));
    expect(await bucket.list("u1")).toEqual(["u1/exp/data.zip"]);
    const chunks: Buffer[] = [];
    for await (const c of await bucket.read("u1/exp/data.zip")) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(data)).toBe(true);
    const local = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gcs-")), "copy.zip");
    expect(await bucket.downloadTo("u1/exp/data.zip", local)).toEqual({ size: data.length });
    expect(fs.readFileSync(local).equals(data)).toBe(true);
    await bucket.delete("u1/exp/data.zip");
    expect(await bucket.stat("u1/exp/data.zip")).toBeNull();
    await bucket.delete("u1/exp/data.zip"); // absent is fine
    expect(fake.calls.some((c) => c.startsWith("POST /upload/storage/v1/b/builder-test/o"))).toBe(true);
  });

  it("says not found for a missing object", async () => {
    await expect(bucket.read("u1/missing.zip")).rejects.toBeInstanceOf(BucketNotFoundError);
  });

  it("stores nothing when the size limit stops a write", async () => {
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < 100; i++) yield Buffer.alloc(10_000, i);
      })(),
    );
    await expect(bucket.write("u1/exp/big.zip", body, { maxBytes: 50_000 })).rejects.toBeInstanceOf(BucketLimitError);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.objects.has("builder-test/u1/exp/big.zip")).toBe(false);
  });

  it("refuses unsafe object paths before calling the service", async () => {
    await expect(bucket.stat("../x.zip")).rejects.toThrow();
  });
});
